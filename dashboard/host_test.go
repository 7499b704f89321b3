package dashboard_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dashboard"
)

// withHost is a request edit that sends Host host, as a browser does on a
// name the attacker's DNS rebinds to the dashboard's address.
func withHost(host string) func(*http.Request) {
	return func(r *http.Request) { r.Host = host }
}

// getAs fetches path under the dashboard with the Host header host.
func (c *client) getAs(host, path string) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodGet, c.base+path, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	withHost(host)(req)
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return readBody(c.t, resp)
}

// getBody is getAs's body.
func (c *client) getBody(host, path string) string {
	_, body := c.getAs(host, path)
	return body
}

// TestHost_RebindingNameRefused: a dashboard without an Authorize hook
// answers loopback names only. A page on a name the attacker rebinds to
// 127.0.0.1 reads nothing, and its POST, whose Origin matches its own
// Host, changes nothing.
func TestHost_RebindingNameRefused(t *testing.T) {
	eachDatabase(t, func(t *testing.T, st *core.Store) {
		f := fill(t, st)
		c := serve(t, newDashboard(t, st, dashboard.Options{Actions: true, AllowUnauthenticatedActions: true}), "")
		port := c.base[strings.LastIndex(c.base, ":")+1:]
		evil := "rebind.attacker.example:" + port
		item := "/items/" + f.dead.String()
		for _, p := range []string{"/", item, item + "/revive", "/static/dashboard.css"} {
			code, body := c.getAs(evil, p)
			if code != http.StatusMisdirectedRequest || strings.Contains(body, "b@example.com") || strings.Contains(body, "csrf") {
				t.Errorf("GET %s as %s: status %d, want %d, and none of the dashboard's data", p, evil, code, http.StatusMisdirectedRequest)
			}
		}
		// The attacker's page reads the confirm form on its own name (before
		// the Host check, it could), then posts it from that same name.
		token := "forged"
		if m := tokenRE.FindStringSubmatch(c.getBody(evil, item+"/revive")); m != nil {
			token = m[1]
		}
		code, body := c.post(item+"/revive", url.Values{"csrf": {token}}, func(r *http.Request) {
			r.Host = evil
			r.Header.Set("Origin", "http://"+evil)
		})
		wantStatus(t, "POST revive as "+evil, code, http.StatusMisdirectedRequest, body[strings.Index(body, "<main"):])
		if got := state(t, st, f.dead); got != core.StateDead {
			t.Fatalf("a POST on a rebound name revived the item: it is %s", got)
		}
		// The loopback names and addresses are served.
		for _, h := range []string{"localhost:" + port, "127.0.0.1:" + port, "[::1]:" + port, "LOCALHOST", "127.0.0.1"} {
			code, body := c.getAs(h, item)
			wantStatus(t, "GET as "+h, code, http.StatusOK, body)
		}
	})
}

// TestHost_AllowedHosts: Options.AllowedHosts adds the names a deployment
// serves, whatever the port and case; with an Authorize hook and no list,
// every name is served (the application's own authentication decides),
// and a list restricts it again.
func TestHost_AllowedHosts(t *testing.T) {
	t.Parallel()
	st := openStore(t, databases[0])
	cases := []struct {
		opts  dashboard.Options
		host  string
		allow bool
	}{
		{dashboard.Options{AllowedHosts: []string{"plenum.example.com"}}, "plenum.example.com", true},
		{dashboard.Options{AllowedHosts: []string{"plenum.example.com"}}, "Plenum.Example.COM:8443", true},
		{dashboard.Options{AllowedHosts: []string{"plenum.example.com"}}, "plenum.example.com.attacker.example", false},
		{dashboard.Options{AllowedHosts: []string{"plenum.example.com"}}, "localhost:80", true},
		{dashboard.Options{AllowedHosts: []string{"10.0.0.7"}}, "10.0.0.7:8080", true},
		{dashboard.Options{AllowedHosts: []string{"::1"}}, "[::1]:8080", true},
		{dashboard.Options{}, "10.0.0.7:8080", false},
		{dashboard.Options{}, "localhost.attacker.example", false},
		{dashboard.Options{Authorize: allow}, "plenum.example.com", true},
		{dashboard.Options{Authorize: allow, AllowedHosts: []string{"plenum.example.com"}}, "other.example.com", false},
		{dashboard.Options{Authorize: allow, AllowedHosts: []string{"plenum.example.com"}}, "plenum.example.com", true},
	}
	for _, tc := range cases {
		c := serve(t, newDashboard(t, st, tc.opts), "")
		code, body := c.getAs(tc.host, "/static/dashboard.css")
		if got := code == http.StatusOK; got != tc.allow {
			t.Errorf("AllowedHosts %q, Authorize %v, Host %q: status %d, want allowed %v\n%s",
				tc.opts.AllowedHosts, tc.opts.Authorize != nil, tc.host, code, tc.allow, body)
		}
	}
	for _, bad := range []string{"", "a b", "plenum.example.com:443", "http://plenum.example.com", "*.example.com", "a/b"} {
		if _, err := dashboard.New(st, dashboard.Options{AllowedHosts: []string{bad}}); err == nil {
			t.Errorf("New accepted AllowedHosts entry %q", bad)
		}
	}
}
