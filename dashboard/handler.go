package dashboard

import (
	"context"
	"net/http"
	"strings"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
)

// handler is the dashboard: a router over the pages, behind the security
// headers and the Authorize hook.
type handler struct {
	store *core.Store
	// read lists what the pages show, a keyset page at a time.
	read  *browse.Reader
	opts  Options
	csrf  csrfKey
	hosts hostCheck
	mux   *http.ServeMux
}

// baseKey carries the path the dashboard is mounted at (its links' root).
type baseKey struct{}

// ServeHTTP sets the security headers, checks the Host, runs Authorize,
// strips the prefix, and routes.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w.Header())
	if !h.hosts.allows(r.Host) {
		h.refuseHost(w, r)
		return
	}
	if h.opts.Authorize != nil {
		if err := h.opts.Authorize(r); err != nil {
			h.fail(w, r, http.StatusForbidden, "Not authorized", "You are not allowed to see this page.")
			return
		}
	}
	if h.opts.Prefix != "" {
		rest, ok := strings.CutPrefix(r.URL.Path, h.opts.Prefix)
		if !ok || (rest != "" && rest[0] != '/') {
			h.fail(w, r, http.StatusNotFound, "Not found", "No such page.")
			return
		}
		if rest == "" {
			// The prefix alone: send the browser to the root page so
			// that relative resolution is unambiguous.
			http.Redirect(w, r, h.opts.Prefix+"/", http.StatusFound)
			return
		}
		r2 := new(http.Request)
		*r2 = *r
		u := *r.URL
		u.Path = rest
		u.RawPath = ""
		r2.URL = &u
		r = r2
	}
	r = r.WithContext(context.WithValue(r.Context(), baseKey{}, h.base(r)))
	h.mux.ServeHTTP(w, r)
}

// base is the path the dashboard's root is at, as the browser sees it:
// the request's original path (RequestURI, which http.StripPrefix does not
// touch) less the path the handler routes on. A request made in-process
// without a RequestURI falls back to Options.Prefix.
func (h *handler) base(r *http.Request) string {
	uri := r.RequestURI
	if i := strings.IndexAny(uri, "?#"); i >= 0 {
		uri = uri[:i]
	}
	if b, ok := strings.CutSuffix(uri, r.URL.EscapedPath()); ok && strings.HasPrefix(uri, "/") {
		return strings.TrimSuffix(b, "/")
	}
	return h.opts.Prefix
}

// baseOf returns the dashboard's root path for a routed request.
func baseOf(r *http.Request) string {
	b, _ := r.Context().Value(baseKey{}).(string)
	return b
}

// routes registers every page. Actions are registered whatever
// Options.Actions says, so that a POST with actions off is a clear 403 and
// not a 404.
func (h *handler) routes() {
	m := http.NewServeMux()
	// Every route that reads the database takes a turn (limit.go).
	l := newLimiter(h.opts)
	m.HandleFunc("GET /{$}", l.bound(h, h.overview))
	m.HandleFunc("GET /items", l.bound(h, h.items))
	m.HandleFunc("GET /items/{id}", l.bound(h, h.item))
	m.HandleFunc("GET /runs", l.bound(h, h.runs))
	m.HandleFunc("GET /runs/{id}", l.bound(h, h.run))
	m.HandleFunc("GET /barriers/{id}", l.bound(h, h.barrier))
	m.HandleFunc("GET /owners", l.bound(h, h.owners))
	m.HandleFunc("GET /stuck", l.bound(h, h.stuck))
	m.HandleFunc("GET /limits", l.bound(h, h.limits))
	m.HandleFunc("GET /schedules", l.bound(h, h.schedules))
	m.HandleFunc("GET /pipelines", h.pipelines)
	m.HandleFunc("GET /pipelines/{name}", h.pipelineGraph)
	m.HandleFunc("GET /static/dashboard.css", h.css)
	for _, a := range actions {
		m.HandleFunc("GET "+a.pattern, l.bound(h, h.confirm(a)))
		m.HandleFunc("POST "+a.pattern, l.bound(h, h.act(a)))
	}
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.fail(w, r, http.StatusNotFound, "Not found", "No such page.")
	})
	h.mux = m
}

// setSecurityHeaders sets the headers every response carries: nothing but
// the dashboard's own origin may load anything or frame it.
func setSecurityHeaders(hd http.Header) {
	hd.Set("Content-Security-Policy", "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("Cache-Control", "no-store")
}
