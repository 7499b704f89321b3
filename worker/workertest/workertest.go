// Package workertest runs one of a user's handlers on one item against a
// real store, and reports the outcome, so that handlers are tested without
// starting a worker by hand. By default the store is SQLite in the test's
// temporary directory; pass Options.Store to run against the application's
// own database (for handlers whose fences write its tables).
//
//	func TestWelcome(t *testing.T) {
//		res := workertest.Run(t, sendWelcome, WelcomeArgs{Address: "ada@example.com"}, workertest.Options{})
//		if res.State != core.StateCompleted {
//			t.Fatalf("welcome: %s, %v", res.State, res.Err)
//		}
//	}
package workertest

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/stoptest"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// Options tune Run. The zero value runs on a fresh SQLite store.
type Options struct {
	// Store is the store to run on. Default: SQLite in t.TempDir().
	Store *core.Store
	// Kind is the kind the item is enqueued and the handler registered
	// under. Default "workertest".
	Kind string
	// KindConfig are the kind's settings, as for worker.Handle. Run's
	// worker runs no reaper; its StaleAfter is the runtime's 30 s (or the
	// store's minimum, 4 s on CockroachDB, where that is more), lowered to
	// fit a shorter Timeout, which must exceed it by a heartbeat interval
	// (500 ms).
	KindConfig worker.KindConfig
	// MaxAttempts is the item's MaxAttempts. Default 1, so that a failed
	// attempt is its last (State dead); set more to see a retry scheduled
	// (State available).
	MaxAttempts int
	// Timeout bounds the whole run. Default 2 minutes.
	Timeout time.Duration
}

// Result is what became of the item after one run of the handler.
type Result struct {
	// Outcome is the worker's event for the run: worker.EventCompleted,
	// EventFailed, EventDead, EventSnoozed or EventLost.
	Outcome worker.EventKind
	// State is the item's state afterwards.
	State core.State
	// Err is the error the handler returned (nil when it completed).
	Err error
	// Item is the item as stored afterwards: Result, LastError, Attempt,
	// AvailableAt.
	Item core.Item
}

// Result decodes the item's result into v.
func (r Result) Result(v any) error { return json.Unmarshal(r.Item.Result, v) }

// Run enqueues one item with args as its payload, runs handler on it in a
// worker of its own (every outcome path is the real one: batched
// completion, retries, snoozes, recovered panics, fences), stops the
// worker, and returns what became of the item. A setup failure fails t.
func Run[T any](t testing.TB, handler func(ctx context.Context, job *worker.Job[T]) error, args T, opts Options) Result {
	t.Helper()
	if opts.Kind == "" {
		opts.Kind = "workertest"
	}
	if opts.MaxAttempts == 0 {
		opts.MaxAttempts = 1
	}
	if opts.Timeout == 0 {
		opts.Timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), opts.Timeout)
	defer cancel()
	store := opts.Store
	if store == nil {
		db, err := sqlite.Open(filepath.Join(t.TempDir(), "workertest.db"))
		if err != nil {
			t.Fatalf("workertest: %v", err)
		}
		t.Cleanup(func() { db.Close() })
		if store, err = core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true}); err != nil {
			t.Fatalf("workertest: %v", err)
		}
	}
	payload, err := json.Marshal(args)
	if err != nil {
		t.Fatalf("workertest: payload: %v", err)
	}
	queue := "workertest-" + opts.Kind
	enq, err := store.Enqueue(ctx, core.ItemSpec{Queue: queue, Kind: opts.Kind, Payload: payload, MaxAttempts: opts.MaxAttempts})
	if err != nil {
		t.Fatalf("workertest: enqueue: %v", err)
	}
	id := enq[0].ID

	var once sync.Once
	outcome := make(chan worker.Event, 1)
	w, err := worker.New(store, worker.Config{
		Queues:            map[string]worker.QueueConfig{queue: {MaxWorkers: 1}},
		PollInterval:      10 * time.Millisecond,
		HeartbeatInterval: heartbeat,
		StaleAfter:        staleAfter(store, opts.KindConfig),
		ReapInterval:      -1,
		Hooks: worker.HookFunc(func(_ context.Context, e worker.Event) {
			switch e.Kind {
			case worker.EventCompleted, worker.EventFailed, worker.EventDead, worker.EventSnoozed, worker.EventLost:
				if e.Item.ID == id {
					once.Do(func() { outcome <- e })
				}
			}
		}),
	})
	if err != nil {
		t.Fatalf("workertest: %v", err)
	}
	worker.Handle(w, opts.Kind, handler, opts.KindConfig)
	if err := w.Start(ctx); err != nil {
		t.Fatalf("workertest: start: %v", err)
	}
	var ev worker.Event
	select {
	case ev = <-outcome:
	case <-w.Done():
		// Stopped by itself (lost): no outcome would come. One may have
		// come just before.
		select {
		case ev = <-outcome:
		default:
			t.Fatalf("workertest: the worker stopped before an outcome: %v", w.Err())
		}
	case <-ctx.Done():
		t.Fatalf("workertest: no outcome within %v", opts.Timeout)
	}
	// Stop waits for the handler to return, which the end of its context
	// should make it do: one that does not fails t rather than hang it.
	end, _ := ctx.Deadline()
	err = stoptest.Stop(t, w.Stop, time.Until(end))
	if err != nil {
		t.Fatalf("workertest: stop: %v", err)
	}
	it, err := store.Get(ctx, id)
	if err != nil {
		t.Fatalf("workertest: %v", err)
	}
	return Result{Outcome: ev.Kind, State: it.State, Err: ev.Err, Item: it}
}

// heartbeat is how often Run's worker heartbeats.
const heartbeat = 500 * time.Millisecond

// staleAfter is Run's StaleAfter: the runtime's default, 30 s, or the
// store's minimum where that is more (CockroachDB's is 4 s), so that a
// handler run on a loaded machine, whose heartbeats come late by seconds,
// is not stopped as lost; lowered to fit a kind's Timeout that is
// shorter, since a Timeout must exceed StaleAfter plus a heartbeat
// interval (a Timeout too short for the store is refused by New, saying
// so).
func staleAfter(store *core.Store, kind worker.KindConfig) time.Duration {
	least := max(2*store.MinLease(), 3*heartbeat)
	stale := max(30*time.Second, least)
	if kind.Timeout > 0 {
		stale = max(min(stale, kind.Timeout-heartbeat), least)
	}
	return stale
}
