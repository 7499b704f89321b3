package dashboard

import (
	"fmt"
	"net"
	"net/http"
	"strings"
)

// hostCheck decides which Host headers the dashboard answers. A browser
// sends the name it resolved, so a name an attacker's DNS points at the
// dashboard's address (DNS rebinding) arrives as that name: refusing names
// the deployment does not serve keeps a page on such a name from reading
// the dashboard or posting to it as its own origin.
type hostCheck struct {
	// any is set when every name is served: an Authorize hook with no
	// AllowedHosts.
	any bool
	// names are the allowed names, lower case, besides the loopback ones.
	names map[string]bool
}

// newHostCheck validates opts.AllowedHosts and returns the check.
func newHostCheck(opts Options) (hostCheck, error) {
	c := hostCheck{any: opts.Authorize != nil && len(opts.AllowedHosts) == 0, names: map[string]bool{}}
	for _, h := range opts.AllowedHosts {
		if err := validHostName(h); err != nil {
			return hostCheck{}, fmt.Errorf("dashboard: AllowedHosts %q: %w", h, err)
		}
		c.names[canonicalHost(h)] = true
	}
	return c, nil
}

// validHostName accepts a DNS name or an IP address, without a port.
func validHostName(h string) error {
	if h == "" {
		return fmt.Errorf("empty")
	}
	if net.ParseIP(strings.Trim(h, "[]")) != nil {
		return nil
	}
	for _, r := range h {
		ok := r == '-' || r == '.' || r == '_' || ('0' <= r && r <= '9') || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z')
		if !ok {
			return fmt.Errorf("want a host name or an IP address, without a scheme, port or wildcard")
		}
	}
	return nil
}

// canonicalHost is a host name as compared: lower case, without IPv6
// brackets or the root's trailing dot.
func canonicalHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}

// allows reports whether the request's Host (name and optional port) is
// one the dashboard serves: a loopback name or address, or one of the
// allowed names.
func (c hostCheck) allows(hostport string) bool {
	if c.any {
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = canonicalHost(host)
	if host == "" {
		return false
	}
	return loopbackHost(host) || c.names[host]
}

// loopbackHost reports whether host names this machine whatever DNS says:
// "localhost" (which browsers resolve themselves) or a loopback address.
// No DNS answer can make another name mean either.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// refuseHost renders the page for a request on a name the dashboard does
// not serve: 421 Misdirected Request, the status for a server that does
// not answer for that authority.
func (h *handler) refuseHost(w http.ResponseWriter, r *http.Request) {
	h.fail(w, r, http.StatusMisdirectedRequest, "Unknown host name",
		"This dashboard does not answer to the host name "+quote(r.Host)+". It serves loopback names and addresses, and the names listed in its options (dashboard.Options.AllowedHosts; plenum dashboard --allow-host).")
}
