package workersuite

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/stoptest"
	"github.com/plenumdb/plenum/worker"
)

// maintenancePurgesFinishedItems runs two workers' maintenance
// at once on a clock two hours ahead: the finished items past RetainFor go,
// each once, and what is not finished stays.
func maintenancePurgesFinishedItems(e *env) {
	t := e.t
	const n = 120
	specs := make([]core.ItemSpec, n)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: "finished"}
	}
	ids := e.enqueue(specs...)
	keep := e.enqueue(core.ItemSpec{Queue: "finished"})[0]
	owner, err := e.store.RegisterOwner(e.ctx, core.RegisterOwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := e.store.Claim(e.ctx, core.ClaimParams{Queue: "finished", Owner: owner, Limit: n, Lease: time.Hour})
	if err != nil || len(cs) != n {
		t.Fatalf("claimed %d, %v", len(cs), err)
	}
	done := make([]core.Completion, n)
	for i, c := range cs {
		done[i] = core.Completion{Claim: c}
	}
	if lost, err := e.store.CompleteMany(e.ctx, done); err != nil || len(lost) > 0 {
		t.Fatalf("CompleteMany: %v, %v", lost, err)
	}
	if err := e.store.Heartbeat(e.ctx, owner); err != nil {
		t.Fatal(err)
	}
	var purged atomic.Int64
	later := e.open(2 * time.Hour)
	for range 2 {
		cfg := e.fast(map[string]int{"elsewhere": 1})
		cfg.ReapInterval = 200 * time.Millisecond
		cfg.RetainFor = time.Hour
		cfg.Hooks = worker.HookFunc(func(_ context.Context, ev worker.Event) {
			if ev.Kind == worker.EventPurged {
				purged.Add(int64(ev.Purge.Items))
			}
		})
		w, err := worker.New(later, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Start(e.ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = stoptest.Stop(t, w.Stop, 10*time.Second) })
	}
	end := time.Now().Add(30 * time.Second)
	for purged.Load() < n && time.Now().Before(end) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := purged.Load(); got != n {
		t.Errorf("the two workers purged %d items in all, want %d, each once", got, n)
	}
	for _, id := range ids[:5] {
		if _, err := e.store.Get(e.ctx, id); !errors.Is(err, core.ErrNotFound) {
			t.Errorf("finished item %s: %v, want purged", id, err)
		}
	}
	if it := e.get(keep); it.State != core.StateAvailable {
		t.Errorf("available item: %s, want kept", it.State)
	}
}
