package workersuite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/stoptest"
	"github.com/plenumdb/plenum/worker"
)

// outcomes runs every outcome: a result, an error retried with
// the kind's backoff until the kind's MaxAttempts dead-letters it, a
// discard error (dead at once), a snooze (back without using an attempt),
// a panic (a failed attempt with its stack), a payload that does not
// decode, and a kind with no handler.
func outcomes(e *env) {
	t := e.t
	const q = "outcomes"
	ids := e.enqueue(
		core.ItemSpec{Queue: q, Kind: "ok", Payload: json.RawMessage(`{"name":"ada"}`)},
		core.ItemSpec{Queue: q, Kind: "fail"},
		core.ItemSpec{Queue: q, Kind: "discard"},
		core.ItemSpec{Queue: q, Kind: "snooze"},
		core.ItemSpec{Queue: q, Kind: "panic"},
		core.ItemSpec{Queue: q, Kind: "ok", Payload: json.RawMessage(`{"name":7}`)},
		core.ItemSpec{Queue: q, Kind: "nobody", MaxAttempts: 1},
	)
	ok, fail, discard, snooze, panicky, undecodable, unknown := ids[0], ids[1], ids[2], ids[3], ids[4], ids[5], ids[6]
	var failRuns, snoozeRuns atomic.Int32
	var mu sync.Mutex
	events := map[worker.EventKind]int{}
	cfg := e.fast(map[string]int{q: 4})
	cfg.Hooks = worker.HookFunc(func(_ context.Context, ev worker.Event) {
		mu.Lock()
		events[ev.Kind]++
		mu.Unlock()
	})
	e.start(cfg, func(w *worker.Worker) {
		worker.Handle(w, "ok", func(ctx context.Context, job *worker.Job[greet]) error {
			return job.SetResult(map[string]string{"hello": job.Args.Name})
		})
		w.HandleFunc("fail", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
			failRuns.Add(1)
			return fmt.Errorf("attempt %d failed", job.Attempt())
		}, worker.KindConfig{MaxAttempts: 3, Backoff: func(int) time.Duration { return 20 * time.Millisecond }})
		w.HandleFunc("discard", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
			return worker.Discard(errors.New("bad input"))
		})
		w.HandleFunc("snooze", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
			if snoozeRuns.Add(1) == 1 {
				return worker.Snooze(50 * time.Millisecond)
			}
			return job.SetResult(job.Attempt())
		})
		w.HandleFunc("panic", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
			panic("handler blew up")
		}, worker.KindConfig{MaxAttempts: 1})
	})
	terminal := func(it core.Item) bool { return it.State.Terminal() }
	e.waitFor(patience, "finished", terminal, ok, fail, discard, snooze, panicky, undecodable, unknown)

	if it := e.get(ok); it.State != core.StateCompleted || !sameJSON(it.Result, `{"hello":"ada"}`) || it.Attempt != 1 {
		t.Errorf("ok: %s, result %s, attempt %d; want completed with {\"hello\":\"ada\"} at attempt 1", it.State, it.Result, it.Attempt)
	}
	if it := e.get(fail); it.State != core.StateDead || it.Attempt != 3 || failRuns.Load() != 3 || it.LastError != "attempt 3 failed" {
		t.Errorf("fail: %s after %d attempts (%d runs), error %q; want dead after the kind's 3", it.State, it.Attempt, failRuns.Load(), it.LastError)
	}
	if it := e.get(discard); it.State != core.StateDead || it.Attempt != 1 || !strings.Contains(it.LastError, "bad input") {
		t.Errorf("discard: %s at attempt %d, error %q; want dead at the first attempt", it.State, it.Attempt, it.LastError)
	}
	if it := e.get(snooze); it.State != core.StateCompleted || string(it.Result) != "1" || snoozeRuns.Load() != 2 {
		t.Errorf("snooze: %s, result %s after %d runs; want completed at attempt 1 (the snooze used none) after 2 runs", it.State, it.Result, snoozeRuns.Load())
	}
	if it := e.get(panicky); it.State != core.StateDead || !strings.Contains(it.LastError, "panic: handler blew up") || !strings.Contains(it.LastError, "goroutine") {
		t.Errorf("panic: %s, error %q; want dead with the panic and its stack", it.State, it.LastError)
	}
	if it := e.get(undecodable); it.State != core.StateDead || it.Attempt != 1 || !strings.Contains(it.LastError, "decode") {
		t.Errorf("undecodable payload: %s at attempt %d, error %q; want dead at once", it.State, it.Attempt, it.LastError)
	}
	if it := e.get(unknown); it.State != core.StateDead || !strings.Contains(it.LastError, "no handler") {
		t.Errorf("unknown kind: %s, error %q; want a failed attempt naming the missing handler", it.State, it.LastError)
	}
	// A batch's events follow its commit, so the items can be seen
	// finished a moment before the last events arrive: wait for them, then
	// check that no more come than there were outcomes.
	want := map[worker.EventKind]int{worker.EventCompleted: 2, worker.EventFailed: 2, worker.EventDead: 5, worker.EventSnoozed: 1}
	arrived := func() bool {
		mu.Lock()
		defer mu.Unlock()
		for k, n := range want {
			if events[k] < n {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(10 * time.Second); !arrived() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	for k, n := range want {
		if events[k] != n {
			t.Errorf("%d %s events, want %d (all: %v)", events[k], k, n, events)
		}
	}
}

// deadlineRefusesLateResult checks that a handler's context is
// cancelled before its claim's lease ends, and that a handler returning
// after its deadline has its result refused: its fenced write does not
// commit, the item is not completed, and the attempt counts as a timeout.
func deadlineRefusesLateResult(e *env) {
	t := e.t
	const q = "deadline"
	audit := e.auditTable()
	id := e.enqueue(core.ItemSpec{Queue: q, Kind: "slow", MaxAttempts: 1})[0]
	type seen struct {
		cause    error
		deadline time.Time
		fenceErr error
	}
	got := make(chan seen, 1)
	cfg, timeout := e.deadlineConfig(q)
	e.start(cfg, func(w *worker.Worker) {
		w.HandleFunc("slow", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
			var s seen
			s.deadline, _ = ctx.Deadline()
			<-ctx.Done()
			s.cause = context.Cause(ctx)
			time.Sleep(200 * time.Millisecond) // and returns late
			s.fenceErr = job.Fence(ctx, func(ctx context.Context, f *core.Fenced) error {
				_, err := f.ExecContext(ctx, e.d.Rebind("INSERT INTO "+audit+" (id) VALUES (?)"), job.IdempotencyKey())
				return err
			})
			got <- s
			return nil
		}, worker.KindConfig{Timeout: timeout})
	})
	var s seen
	select {
	case s = <-got:
	case <-time.After(timeout + time.Minute):
		t.Fatal("the handler's context was never cancelled")
	}
	if !errors.Is(s.cause, worker.ErrDeadline) {
		t.Errorf("handler context ended with %v, want ErrDeadline", s.cause)
	}
	if s.fenceErr == nil {
		t.Errorf("a fence after the deadline committed, want it refused")
	}
	e.waitFor(time.Minute, "dead after its only attempt timed out", func(it core.Item) bool { return it.State == core.StateDead }, id)
	it := e.get(id)
	if !strings.Contains(it.LastError, "deadline") || it.Result != nil || it.CrashCount != 0 {
		t.Errorf("item: error %q, result %s, crashes %d; want a deadline error, no result, no crash", it.LastError, it.Result, it.CrashCount)
	}
	// Cancelled before the lease ended: the claim's lease is Timeout
	// from the claim, and the context's deadline the 1 s margin before,
	// counted from when the claim was asked for, a little earlier still.
	// The deadline is what the worker set; when the handler saw it pass
	// is up to the scheduler. A millisecond is the coarsest database
	// clock's resolution.
	if s.deadline.IsZero() {
		t.Errorf("the handler's context has no deadline")
	} else if left := it.ClaimedAt.Add(timeout).Sub(s.deadline.UTC()); left < time.Second-time.Millisecond {
		t.Errorf("handler context's deadline %v before the lease ended, want the 1 s margin or more", left)
	}
	if n := e.count(audit); n != 0 {
		t.Errorf("%d fenced effects of a late handler, want 0", n)
	}
}

// deadlineConfig is the deadline test's worker, with its kind's Timeout:
// the shortest the worker accepts above a StaleAfter of 8 s, rounded up to
// a second. The test waits a whole Timeout, so StaleAfter is shorter than
// elsewhere in the suite, yet still far above the delays a loaded machine
// gives the heartbeats of a worker running one handler.
func (e *env) deadlineConfig(q string) (worker.Config, time.Duration) {
	cfg := e.fast(map[string]int{q: 1})
	cfg.StaleAfter = max(8*time.Second, 2*e.store.MinLease())
	return cfg, cfg.StaleAfter + cfg.HeartbeatInterval + time.Second
}

// cancelStopsRunningHandler checks that cancelling an item by
// id while its handler runs cancels that handler's context within a few
// poll intervals, and that nothing is recorded over the cancellation.
func cancelStopsRunningHandler(e *env) {
	t := e.t
	const q = "cancel"
	id := e.enqueue(core.ItemSpec{Queue: q, Kind: "block"})[0]
	started := make(chan struct{})
	ended := make(chan error, 1)
	e.start(e.fast(map[string]int{q: 1}), func(w *worker.Worker) {
		w.HandleFunc("block", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
			close(started)
			<-ctx.Done()
			ended <- context.Cause(ctx)
			return ctx.Err()
		})
	})
	stoptest.Await(t, started, 20*time.Second, "start of the handler")
	at := time.Now()
	if err := e.store.Cancel(e.ctx, id); err != nil {
		t.Fatal(err)
	}
	select {
	case cause := <-ended:
		if !errors.Is(cause, worker.ErrCancelled) {
			t.Errorf("handler context ended with %v, want ErrCancelled", cause)
		}
		if took := time.Since(at); took > 2*time.Second {
			t.Errorf("handler cancelled %v after the item, want within a few 50 ms polls", took)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled item's handler is still running")
	}
	time.Sleep(200 * time.Millisecond)
	if it := e.get(id); it.State != core.StateCancelled {
		t.Errorf("item: %s, want still cancelled", it.State)
	}
}

// gracefulShutdown checks Stop with work in flight: handlers
// that finish before Stop's deadline complete; the others have their
// contexts cancelled, and their items are given back once they return,
// with no attempt used and no crash counted; the worker deregisters, so
// another owner claims those items at once, with no reaper.
func gracefulShutdown(e *env) {
	t := e.t
	const q = "shutdown"
	var specs []core.ItemSpec
	for range 3 {
		specs = append(specs, core.ItemSpec{Queue: q, Kind: "quick"}, core.ItemSpec{Queue: q, Kind: "stuck"})
	}
	ids := e.enqueue(specs...)
	var running sync.WaitGroup
	running.Add(len(ids))
	var returnedAt atomic.Int64
	w := e.start(e.fast(map[string]int{q: len(ids)}), func(w *worker.Worker) {
		w.HandleFunc("quick", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
			running.Done()
			time.Sleep(300 * time.Millisecond)
			return nil
		})
		w.HandleFunc("stuck", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
			running.Done()
			<-ctx.Done()
			time.Sleep(100 * time.Millisecond) // returns a little after
			returnedAt.Store(time.Now().UnixNano())
			if !errors.Is(context.Cause(ctx), worker.ErrStopped) {
				t.Errorf("stuck handler's context ended with %v, want ErrStopped", context.Cause(ctx))
			}
			return ctx.Err()
		})
	})
	allRunning := make(chan struct{})
	go func() { running.Wait(); close(allRunning) }()
	stoptest.Await(t, allRunning, 30*time.Second, "start of every handler")
	if err := stoptest.Stop(t, w.Stop, time.Second); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	for i, id := range ids {
		it := e.get(id)
		if i%2 == 0 {
			if it.State != core.StateCompleted {
				t.Errorf("quick item %s: %s, want completed", id, it.State)
			}
			continue
		}
		if it.State != core.StateAvailable || it.Attempt != 0 || it.CrashCount != 0 {
			t.Errorf("stuck item %s: %s, attempt %d, crashes %d; want available, 0, 0", id, it.State, it.Attempt, it.CrashCount)
		}
	}
	if err := e.store.Heartbeat(e.ctx, w.Owner()); !errors.Is(err, core.ErrOwnerLost) {
		t.Errorf("the stopped worker's owner: heartbeat = %v, want ErrOwnerLost (deregistered)", err)
	}
	other, err := e.store.RegisterOwner(e.ctx, core.RegisterOwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := e.store.Claim(e.ctx, core.ClaimParams{Queue: q, Owner: other, Limit: 10, Lease: time.Minute})
	if err != nil || len(cs) != 3 {
		t.Errorf("another owner claimed %d, %v; want the 3 given back, at once", len(cs), err)
	}
	select {
	case <-w.Done():
	default:
		t.Error("Done not closed after Stop")
	}
}

// stopsWhenOwnerLost checks that a worker that learns it was
// reaped stops claiming, cancels its handlers (cause ErrLost) and stops,
// reporting why, instead of running on as a zombie.
func stopsWhenOwnerLost(e *env) {
	t := e.t
	const q = "lost"
	e.enqueue(core.ItemSpec{Queue: q, Kind: "block"})
	started := make(chan struct{})
	cause := make(chan error, 1)
	cfg := e.fast(map[string]int{q: 1})
	cfg.ReapInterval = -1
	w := e.start(cfg, func(w *worker.Worker) {
		w.HandleFunc("block", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
			close(started)
			<-ctx.Done()
			cause <- context.Cause(ctx)
			return ctx.Err()
		})
	})
	stoptest.Await(t, started, 20*time.Second, "start of the handler")
	// A reaper an hour ahead finds the worker stale.
	if r, err := e.open(time.Hour).Reap(e.ctx, core.ReapParams{StaleAfter: e.stale()}); err != nil || r.OwnersRemoved != 1 {
		t.Fatalf("Reap = %+v, %v; want the worker removed", r, err)
	}
	select {
	case <-w.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the reaped worker still runs")
	}
	if err := w.Err(); !errors.Is(err, worker.ErrLost) || !errors.Is(err, core.ErrOwnerLost) {
		t.Errorf("Err = %v, want ErrLost and core.ErrOwnerLost", err)
	}
	// The reaper released the claim too: whichever the worker saw
	// first, its loss or the lost claim, cancelled the handler.
	if c := <-cause; !errors.Is(c, worker.ErrLost) && !errors.Is(c, worker.ErrCancelled) {
		t.Errorf("handler context ended with %v, want ErrLost or ErrCancelled", c)
	}
}

// fencedEffectsOnce runs many items through fenced handlers on
// several slots: every item completes, with its effect written once, and a
// store call made inside the fence is refused with ErrInsideFence rather
// than hanging.
func fencedEffectsOnce(e *env) {
	t := e.t
	const q, n = "fenced", 60
	audit := e.auditTable()
	specs := make([]core.ItemSpec, n)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: q, Kind: "audit", Payload: json.RawMessage(fmt.Sprintf(`{"name":"n%d"}`, i))}
	}
	ids := e.enqueue(specs...)
	var inside atomic.Int32
	e.start(e.fast(map[string]int{q: 8}), func(w *worker.Worker) {
		worker.Handle(w, "audit", func(ctx context.Context, job *worker.Job[greet]) error {
			if err := job.SetResult(job.Args.Name); err != nil {
				return err
			}
			return job.Fence(ctx, func(ctx context.Context, f *core.Fenced) error {
				if job.Args.Name == "n0" {
					if err := e.store.Complete(ctx, f.Claim(), nil); errors.Is(err, core.ErrInsideFence) {
						inside.Add(1)
					} else {
						t.Errorf("store call inside a fence = %v, want ErrInsideFence", err)
					}
				}
				_, err := f.ExecContext(ctx, e.d.Rebind("INSERT INTO "+audit+" (id) VALUES (?)"), job.IdempotencyKey())
				return err
			})
		})
	})
	e.waitFor(patience, "completed", func(it core.Item) bool { return it.State == core.StateCompleted }, ids...)
	if got := e.count(audit); got != n {
		t.Errorf("%d effects, want %d", got, n)
	}
	if inside.Load() < 1 {
		t.Error("the store call inside the fence was not refused")
	}
	if it := e.get(ids[5]); !sameJSON(it.Result, `"n5"`) {
		t.Errorf("result %s, want \"n5\"", it.Result)
	}
}

// completesInBatches checks that no-op handlers on many slots
// complete their items through batched CompleteMany calls.
func completesInBatches(e *env) {
	t := e.t
	const q, n = "batch", 300
	specs := make([]core.ItemSpec, n)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: q, Kind: "noop"}
	}
	ids := e.enqueue(specs...)
	var done atomic.Int32
	cfg := e.fast(map[string]int{q: 50})
	// More handlers than the dialect's default pool allows for: the no-op
	// handlers take no connection, but New counts one each.
	worker.FitPool(e.store, cfg)
	e.start(cfg, func(w *worker.Worker) {
		w.HandleFunc("noop", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
			done.Add(1)
			return nil
		})
	})
	e.waitFor(patience, "completed", func(it core.Item) bool { return it.State == core.StateCompleted }, ids[n-1])
	e.waitFor(patience, "completed", func(it core.Item) bool { return it.State == core.StateCompleted }, ids...)
	if done.Load() != n {
		t.Errorf("%d handler runs, want %d (each item once)", done.Load(), n)
	}
}

// runsAtMostMaxWorkers checks that a queue never runs more handlers at
// once than its MaxWorkers, over many claims whose completions land in
// batches (a landed batch frees its slots; a slot freed twice would let
// the next claim take more than there are slots), and that each item
// runs once.
func runsAtMostMaxWorkers(e *env) {
	t := e.t
	const q, n, slots = "slots", 120, 3
	specs := make([]core.ItemSpec, n)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: q, Kind: "busy"}
	}
	ids := e.enqueue(specs...)
	var running, most, runs atomic.Int32
	e.start(e.fast(map[string]int{q: slots}), func(w *worker.Worker) {
		w.HandleFunc("busy", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
			now := running.Add(1)
			defer running.Add(-1)
			for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
			}
			runs.Add(1)
			// Long enough for the next claim to overlap it, were it
			// given more slots than are free.
			time.Sleep(2 * time.Millisecond)
			return nil
		})
	})
	e.waitFor(patience, "completed", func(it core.Item) bool { return it.State == core.StateCompleted }, ids...)
	if m := most.Load(); m > slots {
		t.Errorf("%d handlers ran at once, want at most MaxWorkers %d", m, slots)
	}
	if got := runs.Load(); got != n {
		t.Errorf("%d handler runs, want %d (each item once)", got, n)
	}
}
