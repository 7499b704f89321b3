package dashboard

import (
	"fmt"
	"net/http"
	"time"
)

// The defaults of Options.MaxConcurrentReads and Options.ReadWait.
const (
	// DefaultMaxConcurrentReads is a few pages at once: one reader's
	// clicks never wait, and a burst leaves the rest of a pool shared with
	// the application's workers (dialect.DefaultMaxOpenConns, 25, from a
	// dialect's Open) alone.
	DefaultMaxConcurrentReads = 4
	// DefaultReadWait is how long a request waits for a turn before its
	// 503: long enough for a queue of pages of tens of milliseconds each,
	// short enough that a person sees the dashboard is overloaded.
	DefaultReadWait = 5 * time.Second
)

// limitDefaults fills the defaults of Options.MaxConcurrentReads and
// Options.ReadWait.
func limitDefaults(opts *Options) {
	if opts.MaxConcurrentReads == 0 {
		opts.MaxConcurrentReads = DefaultMaxConcurrentReads
	}
	if opts.ReadWait == 0 {
		opts.ReadWait = DefaultReadWait
	}
}

// checkLimits refuses negative read limits (Validate).
func checkLimits(opts Options) error {
	switch {
	case opts.MaxConcurrentReads < 0:
		return fmt.Errorf("dashboard: MaxConcurrentReads %d is negative", opts.MaxConcurrentReads)
	case opts.ReadWait < 0:
		return fmt.Errorf("dashboard: ReadWait %v is negative", opts.ReadWait)
	}
	return nil
}

// limiter lets at most cap(turns) requests read the database at once; the
// others wait for a turn, up to wait.
type limiter struct {
	turns chan struct{}
	wait  time.Duration
}

func newLimiter(opts Options) *limiter {
	return &limiter{turns: make(chan struct{}, opts.MaxConcurrentReads), wait: opts.ReadWait}
}

// bound wraps a page or action of h, which reads the database, so that it
// runs only in a turn of l. A request that waits l.wait without one gets
// 503 Service Unavailable, with Retry-After, rather than a connection of a
// pool that the application's workers need too; one whose client gave up
// meanwhile gets nothing.
func (l *limiter) bound(h *handler, next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		select {
		case l.turns <- struct{}{}:
		default:
			t := time.NewTimer(l.wait)
			defer t.Stop()
			select {
			case l.turns <- struct{}{}:
			case <-r.Context().Done():
				return
			case <-t.C:
				w.Header().Set("Retry-After", "1")
				h.fail(w, r, http.StatusServiceUnavailable, "Busy",
					fmt.Sprintf("The dashboard is serving %d requests at once and this one waited %v for its turn: try again in a moment.", cap(l.turns), l.wait))
				return
			}
		}
		defer func() { <-l.turns }()
		next(w, r)
	}
}
