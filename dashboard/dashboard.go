package dashboard

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/plenumdb/plenum/core"
)

// Options configure the dashboard handler. The zero value is a read-only
// dashboard mounted at the root, with no authorization hook.
type Options struct {
	// Prefix is the path the handler is mounted at when it sees the full
	// request path ("/admin/plenum"; no trailing slash): the handler strips
	// it itself. Leave it empty at the root, or when the handler is wrapped
	// in http.StripPrefix: links are built from the request's own URI
	// either way.
	Prefix string

	// Authorize runs first on every request, pages and assets alike. A
	// non-nil error refuses the request with 403 Forbidden (the error's
	// text is not shown). For a login redirect or a 401 challenge, wrap
	// the handler in your own middleware instead.
	Authorize func(*http.Request) error

	// Actions enables the buttons and POST endpoints that change the
	// database: revive a dead item or a halted run (or one of its steps),
	// cancel an item or a run, signal a run. Default off: POSTs are refused
	// with 403 and no button is shown. New refuses Actions without
	// Authorize unless AllowUnauthenticatedActions is set.
	Actions bool

	// AllowUnauthenticatedActions allows Actions without an Authorize hook.
	// Set it only for a handler served on a loopback address to a single
	// user (as "plenum dashboard --actions" does, which refuses any other
	// address): anyone who can reach the handler can then change the
	// database.
	AllowUnauthenticatedActions bool

	// Secret keys the CSRF tokens. Default: 32 random bytes per handler,
	// so a token is valid only on the handler that issued it; give the
	// same secret (at least 32 bytes) to every replica behind a load
	// balancer.
	Secret []byte

	// Title is shown in the header and the page titles. Default "Plenum".
	Title string

	// MaxConcurrentReads bounds the requests that read the database at
	// once (pages and actions; each holds at most one connection at a
	// time), so that a burst of requests cannot take every connection of a
	// pool the application's workers share. The others wait for a turn,
	// up to ReadWait. Default DefaultMaxConcurrentReads (4).
	MaxConcurrentReads int

	// ReadWait is how long a request waits for a turn before it is
	// answered 503 Service Unavailable, with Retry-After. Default
	// DefaultReadWait (5 s).
	ReadWait time.Duration

	// SearchRows bounds the rows the items list examines per page for a
	// kind filter, which no index serves (core.ItemFilter.SearchRows): 1
	// to core.ItemSearchRows; 0 means core.ItemSearchRows. A page that
	// stops there says so and links to where the search goes on.
	SearchRows int
}

// New returns the dashboard for store. It refuses Options.Actions without
// Options.Authorize (unless Options.AllowUnauthenticatedActions), a Prefix
// that is not a clean absolute path, a Secret shorter than 32 bytes, and a
// negative MaxConcurrentReads or ReadWait.
func New(store *core.Store, opts Options) (http.Handler, error) {
	if store == nil {
		return nil, errors.New("dashboard: nil store")
	}
	if opts.Actions && opts.Authorize == nil && !opts.AllowUnauthenticatedActions {
		return nil, errors.New("dashboard: Actions needs an Authorize hook (or AllowUnauthenticatedActions, for a handler served on loopback only)")
	}
	if err := checkPrefix(opts.Prefix); err != nil {
		return nil, err
	}
	if opts.SearchRows < 0 || opts.SearchRows > core.ItemSearchRows {
		return nil, fmt.Errorf("dashboard: SearchRows %d is outside [0, %d]", opts.SearchRows, core.ItemSearchRows)
	}
	if err := limitDefaults(&opts); err != nil {
		return nil, err
	}
	secret := opts.Secret
	switch {
	case secret == nil:
		secret = make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return nil, fmt.Errorf("dashboard: secret: %w", err)
		}
	case len(secret) < 32:
		return nil, errors.New("dashboard: Secret must be at least 32 bytes")
	default:
		secret = append([]byte(nil), secret...)
	}
	if opts.Title == "" {
		opts.Title = "Plenum"
	}
	h := &handler{store: store, opts: opts, csrf: csrfKey(secret)}
	h.routes()
	return h, nil
}

// checkPrefix refuses a prefix that would make links ambiguous.
func checkPrefix(p string) error {
	if p == "" {
		return nil
	}
	if !strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.Contains(p, "//") ||
		strings.ContainsAny(p, "?#%\"'<> \t\r\n") {
		return fmt.Errorf("dashboard: Prefix %q: want an absolute path without a trailing slash, e.g. /admin/plenum", p)
	}
	return nil
}
