package worker

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/stoptest"
	"github.com/plenumdb/plenum/sqlite"
)

// landingWorker starts a worker on a SQLite store holding 3 x slotsN
// items, with one queue of slotsN slots and completions of up to batch,
// its completer's flights landing when the test says (f). Handlers of
// the items claimed first up to fast return at once; the next ones, up
// to slotsN, when hold is closed; later ones at once. It returns the
// number of items claimed so far, and the worker.
func landingWorker(t *testing.T, slotsN, batch, fast int, f *flightRecorder, hold chan struct{}) (*atomic.Int64, *Worker) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "claimloop.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	specs := make([]core.ItemSpec, 3*slotsN)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: "q", Kind: "k"}
	}
	if _, err := st.Enqueue(ctx, specs...); err != nil {
		t.Fatal(err)
	}
	claimed := new(atomic.Int64)
	w, err := New(st, Config{
		Queues:        map[string]QueueConfig{"q": {MaxWorkers: slotsN}},
		PollInterval:  10 * time.Millisecond,
		ReapInterval:  -1,
		PollOnly:      true,
		CompleteBatch: batch,
		Hooks: HookFunc(func(_ context.Context, e Event) {
			if e.Kind == EventClaimed {
				claimed.Add(1)
			}
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	w.completeMany = f.completeMany
	w.landWait, w.linger = time.Hour, time.Hour
	var started atomic.Int64
	w.HandleFunc("k", func(ctx context.Context, _ *Job[json.RawMessage]) error {
		if n := started.Add(1); n > int64(fast) && n <= int64(slotsN) {
			// Or until Stop's deadline, should the test fail before it
			// closes hold.
			select {
			case <-hold:
			case <-ctx.Done():
			}
		}
		return nil
	})
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		f.landAll()
		go func() {
			for range f.entered {
			}
		}()
		_ = stoptest.Stop(t, w.Stop, stopGrace)
	})
	return claimed, w
}

// stopGrace is how long a test's Stop gives running handlers to return.
const stopGrace = 10 * time.Second

// A queue whose claim was completed in two flights waits for the second
// to land before it claims again, and then claims every slot at once:
// otherwise the split stays, and each batch after it costs two claims
// and two completions.
func TestClaimLoop_WaitsForLandingSlotsBeforeClaiming(t *testing.T) {
	t.Parallel()
	const slotsN = 10
	f := newFlightRecorder()
	hold := make(chan struct{})
	claimed, w := landingWorker(t, slotsN, 100, 6, f, hold)
	if got := len(receive(t, f.entered, "first flight")); got != 6 {
		t.Fatalf("first flight of %d, want 6", got)
	}
	close(hold)
	// The four runs' completions are with the completer, gathered for the
	// next flight, before the first lands: landed earlier, it would fly
	// with those that had arrived.
	for deadline := time.Now().Add(testWait); w.flow.coming() > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the four held runs' completions were not handed over within %v", testWait)
		}
	}
	f.land(t, nil) // six slots free; four runs' completions are landing
	if got := len(receive(t, f.entered, "second flight")); got != 4 {
		t.Fatalf("second flight of %d, want 4", got)
	}
	time.Sleep(50 * time.Millisecond)
	if got := claimed.Load(); got != slotsN {
		t.Fatalf("%d items claimed while four slots were landing, want %d (no claim until they land)", got, slotsN)
	}
	f.land(t, nil)
	receive(t, f.entered, "flight of the next claim")
	if got := claimed.Load(); got != 2*slotsN {
		t.Errorf("%d items claimed after the second flight landed, want %d (one claim of every slot)", got, 2*slotsN)
	}
}

// A queue with more slots than a completion batch does not wait for
// landing completions: its completions go in several flights anyway,
// and its free slots claim at once.
func TestClaimLoop_LargeQueueClaimsWhileCompletionsLand(t *testing.T) {
	t.Parallel()
	const slotsN, batch = 10, 5
	f := newFlightRecorder()
	hold := make(chan struct{})
	landingWorker(t, slotsN, batch, batch, f, hold)
	if got := len(receive(t, f.entered, "first flight")); got != batch {
		t.Fatalf("first flight of %d, want %d", got, batch)
	}
	close(hold) // the other five complete, in a second flight
	if got := len(receive(t, f.entered, "second flight")); got != batch {
		t.Fatalf("second flight of %d, want %d", got, batch)
	}
	f.land(t, nil) // the first lands: five slots free, five landing
	select {
	case cs := <-f.entered:
		if len(cs) != batch {
			t.Errorf("flight of %d from the next claim, want %d", len(cs), batch)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no claim of the five free slots while the second flight was landing")
	}
}
