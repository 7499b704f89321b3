package workersuite

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
)

// heldEvent runs items of two flow keys under limits: one key at its
// concurrency limit of one, the other with its rate spent for an hour
// by its first item.
// The worker's hooks hear EventHeld for each, naming the queue, the key
// and the reason (and, for the rate, when it allows the next item); the
// items over the limits do not run.
func heldEvent(e *env) {
	t := e.t
	const q = "flow-held"
	for _, l := range []core.Limit{
		{Queue: q, Key: "one-at-a-time", Concurrency: 1},
		{Queue: q, Key: "hourly", Rate: 1, Per: time.Hour, Burst: 2},
	} {
		if err := e.store.SetLimit(e.ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	// An hourly item costs the whole burst: the claim reads two, and the
	// rate lets it take one.
	var specs []core.ItemSpec
	for range 3 {
		specs = append(specs, core.ItemSpec{Queue: q, Kind: "hold", FlowKey: "one-at-a-time"},
			core.ItemSpec{Queue: q, Kind: "hold", FlowKey: "hourly", Cost: 2})
	}
	e.enqueue(specs...)
	now, err := e.store.Now(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	held := map[string]core.Held{}
	heard := make(chan struct{}, 16)
	cfg := e.fast(map[string]int{q: 6})
	cfg.Hooks = worker.HookFunc(func(_ context.Context, ev worker.Event) {
		if ev.Kind != worker.EventHeld {
			return
		}
		if ev.Queue != q || ev.Held.Queue != q {
			t.Errorf("held event %+v: want queue %q", ev, q)
		}
		mu.Lock()
		held[ev.Held.Key] = ev.Held
		mu.Unlock()
		heard <- struct{}{}
	})
	release := make(chan struct{})
	defer close(release)
	var started atomic.Int64
	e.start(cfg, func(w *worker.Worker) {
		w.HandleFunc("hold", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
			started.Add(1)
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		})
	})
	end := time.After(patience)
	for {
		mu.Lock()
		n := len(held)
		mu.Unlock()
		if n == 2 {
			break
		}
		select {
		case <-heard:
		case <-end:
			t.Fatalf("held events for %v, want both keys", held)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if h := held["one-at-a-time"]; h.Reason != core.HeldConcurrency || !h.Until.IsZero() {
		t.Errorf("held %+v, want reason %q and no time", h, core.HeldConcurrency)
	}
	if h := held["hourly"]; h.Reason != core.HeldRate || h.Until.Before(now.Add(50*time.Minute)) {
		t.Errorf("held %+v, want reason %q until about an hour after %v", h, core.HeldRate, now)
	}
	if n := started.Load(); n > 2 {
		t.Errorf("%d items started, want at most one of each key", n)
	}
}

// flowKeyKind enqueues a Kind's items whose flow key the kind computes
// from the args, alone, in bulk and in the caller's transaction, and
// one whose EnqueueParams.FlowKey overrides it, with a Cost: the items
// carry the keys and cost. Under a concurrency limit of two on one key,
// a worker of eight slots runs at most two of its items at once, and
// runs them all: the loop claims the key's next items as its slots free,
// with no wake-up and a poll interval of an hour.
func flowKeyKind(e *env) {
	t := e.t
	const q, busy = "flow-kind", "tenant-a"
	type task struct {
		Tenant string `json:"tenant"`
		N      int    `json:"n"`
	}
	kind := worker.NewKind("flow.task", worker.KindOptions[task]{FlowKey: func(a task) string { return a.Tenant }})
	p := worker.EnqueueParams{Queue: q}
	var tasks []task
	for i := range 12 {
		tasks = append(tasks, task{Tenant: busy, N: i})
	}
	res, err := kind.EnqueueMany(e.ctx, e.store, tasks[:10], p)
	if err != nil {
		t.Fatal(err)
	}
	one, err := kind.Enqueue(e.ctx, e.store, tasks[10], p)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := e.store.DB().BeginTx(e.ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	inTx, err := kind.EnqueueTx(e.ctx, e.store, tx, tasks[11:], p)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	other, err := kind.Enqueue(e.ctx, e.store, task{Tenant: busy}, worker.EnqueueParams{Queue: q, FlowKey: "override", Cost: 3})
	if err != nil {
		t.Fatal(err)
	}
	ids := []core.EnqueueResult{one}
	ids = append(append(ids, res...), inTx...)
	for _, r := range ids {
		if it := e.get(r.ID); it.FlowKey != busy || it.Cost != 1 {
			t.Errorf("item %s: flow key %q cost %d, want %q (the kind's) and 1", r.ID, it.FlowKey, it.Cost, busy)
		}
	}
	if it := e.get(other.ID); it.FlowKey != "override" || it.Cost != 3 {
		t.Errorf("item %s: flow key %q cost %d, want %q (EnqueueParams') and 3", other.ID, it.FlowKey, it.Cost, "override")
	}

	if err := e.store.SetLimit(e.ctx, core.Limit{Queue: q, Key: busy, Concurrency: 2}); err != nil {
		t.Fatal(err)
	}
	var running, most atomic.Int64
	var done atomic.Int64
	all := make(chan struct{})
	cfg := e.fast(map[string]int{q: 8})
	cfg.PollInterval = time.Hour
	cfg.PollOnly = true
	e.start(cfg, func(w *worker.Worker) {
		kind.Handle(w, func(ctx context.Context, job *worker.Job[task]) error {
			if job.Item().FlowKey == busy {
				n := running.Add(1)
				defer running.Add(-1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				// Until a second runs beside it, for a while: time for
				// more of the key to start, were the limit not kept.
				for end := time.Now().Add(200 * time.Millisecond); running.Load() < 2 && time.Now().Before(end); {
					time.Sleep(time.Millisecond)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if done.Add(1) == int64(len(tasks)+1) {
				close(all)
			}
			return nil
		})
	})
	select {
	case <-all:
	case <-time.After(patience):
		t.Fatalf("%d of %d items ran with a poll interval of an hour: the loop does not claim a key's items as its slots free", done.Load(), len(tasks)+1)
	}
	if m := most.Load(); m != 2 {
		t.Errorf("at most %d items of %q ran at once, want 2 (its concurrency limit, reached)", m, busy)
	}
}
