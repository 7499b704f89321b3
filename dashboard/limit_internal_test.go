package dashboard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plenumdb/plenum/internal/testkit/stoptest"
)

// TestLimit_RefusesPastTheWait holds both turns of a limiter of two, and
// checks that a third request waits ReadWait and gets a 503 with
// Retry-After, that one whose client gave up gets nothing, and that turns
// given back serve again.
func TestLimit_RefusesPastTheWait(t *testing.T) {
	t.Parallel()
	opts := Options{MaxConcurrentReads: 2, ReadWait: 20 * time.Millisecond}
	limitDefaults(&opts)
	h := &handler{opts: opts}
	l := newLimiter(opts)
	var inside atomic.Int32
	entered := make(chan struct{}, 8)
	release := make(chan struct{})
	page := l.bound(h, func(w http.ResponseWriter, r *http.Request) {
		defer inside.Add(-1)
		if inside.Add(1) > 2 {
			// Past the bound: answer at once, for the test to see.
			w.WriteHeader(http.StatusTeapot)
			return
		}
		entered <- struct{}{}
		<-release
	})
	get := func(ctx context.Context) chan *httptest.ResponseRecorder {
		out := make(chan *httptest.ResponseRecorder, 1)
		go func() {
			rec := httptest.NewRecorder()
			page(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil))
			out <- rec
		}()
		return out
	}
	first, second := get(context.Background()), get(context.Background())
	for range 2 {
		stoptest.Await(t, entered, time.Minute, "request inside its turn")
	}

	rec := <-get(context.Background())
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" || !strings.Contains(rec.Body.String(), "2 requests at once") {
		t.Fatalf("a request past the bound: %d, Retry-After %q, body %q; want 503, Retry-After 1 and why", rec.Code, rec.Header().Get("Retry-After"), rec.Body.String())
	}
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	if rec := <-get(gone); rec.Code != http.StatusOK || rec.Body.Len() != 0 {
		t.Fatalf("a request whose client left: %d %q, want nothing written", rec.Code, rec.Body.String())
	}

	close(release)
	for _, r := range []chan *httptest.ResponseRecorder{first, second} {
		if rec := <-r; rec.Code != http.StatusOK {
			t.Fatalf("a request inside its turn: %d", rec.Code)
		}
	}
	if rec := <-get(context.Background()); rec.Code != http.StatusOK {
		t.Fatalf("a request after the turns came back: %d", rec.Code)
	}
}

// TestLimit_Defaults checks Options' defaults and refusals.
func TestLimit_Defaults(t *testing.T) {
	t.Parallel()
	var o Options
	limitDefaults(&o)
	if o.MaxConcurrentReads != DefaultMaxConcurrentReads || o.ReadWait != DefaultReadWait {
		t.Fatalf("defaults: %+v", o)
	}
	for _, bad := range []Options{{MaxConcurrentReads: -1}, {ReadWait: -time.Second}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v accepted by Validate", bad)
		}
	}
}
