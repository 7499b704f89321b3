package dashboard

import (
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/pipeline"
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

	// AllowedHosts are the host names (or IP addresses, without a port)
	// the dashboard answers to besides the loopback ones ("localhost",
	// 127.0.0.0/8, ::1), compared without case or port. A request with
	// any other Host header is refused with 421 Misdirected Request
	// before Authorize runs: a browser sends the name it resolved, so a
	// page on a name the attacker's DNS points at the dashboard's address
	// (DNS rebinding) can neither read it nor post to it as its own
	// origin.
	//
	// Default: loopback names only when Authorize is nil; every name when
	// Authorize is set, since the application's own credentials (cookies,
	// tokens) are bound to its real name and a rebound name does not get
	// them. An Authorize hook that trusts the network instead (a source
	// address, a VPN) must list the names here.
	AllowedHosts []string

	// Actions enables the buttons and POST endpoints that change the
	// database: revive a dead item or a halted run (or one of its steps),
	// cancel an item or a run, signal a run, set or delete a queue's
	// flow control limits. Default off: POSTs are refused
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

	// Logger receives the audit trail, one record per action posted
	// (message "dashboard action"; attributes action, item, run, signal
	// and key, or queue, key and the limit's fields, as they apply, outcome, status, message, caller,
	// remote_addr, and err for a database failure), and the errors of
	// the database the pages meet. Outcomes: done and refused (the store
	// said why not) at Info, forbidden (CSRF or actions off) and
	// bad-request at Warn, not-found at Info, error at Error. Records are
	// logged with the request's context, so a handler can add what the
	// application's middleware put there. Default slog.Default().
	Logger *slog.Logger

	// Caller names who made a request in the audit trail (the caller
	// attribute): typically the user or token Authorize checked. Default
	// none: the record names the remote address alone.
	Caller func(*http.Request) string

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
	// kind filter, which no index serves (browse.ItemFilter.SearchRows): 1
	// to browse.ItemSearchRows; 0 means browse.ItemSearchRows. A page that
	// stops there says so and links to where the search goes on.
	SearchRows int

	// Pipelines are the definitions of the program's pipelines
	// (pipeline.Engine.Graphs, or pipeline.Describe of each), which the
	// database does not hold: the dashboard draws each as a graph on its
	// page (/pipelines/{name}), and a run of one with its items' states
	// over it. A run of a pipeline not given here shows without a graph,
	// as does a run of another version of it than the one given (a Graph
	// of Version 0 is drawn over a run of any version). Each must have a
	// name, and no name twice. Default none.
	Pipelines []pipeline.Graph
}

// New returns the dashboard for store. It refuses Options.Actions without
// Options.Authorize (unless Options.AllowUnauthenticatedActions), a Prefix
// that is not a clean absolute path, a Secret shorter than 32 bytes, an
// AllowedHosts entry that is not a bare host name or IP address, and a
// negative MaxConcurrentReads or ReadWait.
func New(store *core.Store, opts Options) (http.Handler, error) {
	if store == nil {
		return nil, errors.New("dashboard: nil store")
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	limitDefaults(&opts)
	secret := opts.Secret
	switch {
	case secret == nil:
		secret = make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return nil, fmt.Errorf("dashboard: secret: %w", err)
		}
	default:
		secret = append([]byte(nil), secret...)
	}
	if opts.Title == "" {
		opts.Title = "Plenum"
	}
	opts.Pipelines = append([]pipeline.Graph(nil), opts.Pipelines...)
	hosts, _ := newHostCheck(opts) // checked by Validate
	h := &handler{store: store, read: browse.New(store), opts: opts, csrf: csrfKey(secret), hosts: hosts}
	h.routes()
	return h, nil
}

// Validate reports the first option New would refuse, without a store:
// Actions without Authorize (unless AllowUnauthenticatedActions), a Prefix
// that is not a clean absolute path, SearchRows out of range, a Secret
// shorter than 32 bytes, an AllowedHosts entry that is not a bare host
// name or IP address, a negative MaxConcurrentReads or ReadWait, or
// Pipelines with a graph of no name or two of one name.
func (opts Options) Validate() error {
	if opts.Actions && opts.Authorize == nil && !opts.AllowUnauthenticatedActions {
		return errors.New("dashboard: Actions needs an Authorize hook (or AllowUnauthenticatedActions, for a handler served on loopback only)")
	}
	if err := checkPrefix(opts.Prefix); err != nil {
		return err
	}
	if opts.SearchRows < 0 || opts.SearchRows > browse.ItemSearchRows {
		return fmt.Errorf("dashboard: SearchRows %d is outside [0, %d]", opts.SearchRows, browse.ItemSearchRows)
	}
	if opts.Secret != nil && len(opts.Secret) < 32 {
		return errors.New("dashboard: Secret must be at least 32 bytes")
	}
	if err := checkLimits(opts); err != nil {
		return err
	}
	if err := checkPipelines(opts.Pipelines); err != nil {
		return err
	}
	_, err := newHostCheck(opts)
	return err
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
