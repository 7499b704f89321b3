package workersuite

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
)

// kindLimitStored checks that the worker's claim stores each kind's
// MaxAttempts on the items it takes (a KindConfig's, or DefaultKind's for a
// kind registered without one) where the enqueue's is higher, so that Get,
// and the inspect command and dashboard that read it, show during the
// first attempt the limit that applies; a lower limit of the item's own
// stays.
func kindLimitStored(e *env) {
	t := e.t
	const q = "kind-limits"
	ids := e.enqueue(
		core.ItemSpec{Queue: q, Kind: "five"},
		core.ItemSpec{Queue: q, Kind: "five", MaxAttempts: 2},
		core.ItemSpec{Queue: q, Kind: "by-default"},
	)
	want := map[uuid.UUID]int{ids[0]: 5, ids[1]: 2, ids[2]: 4}
	var mu sync.Mutex
	seen := map[uuid.UUID][2]int{} // the job's, then Get's, at the first attempt
	record := func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		it, err := e.store.Get(ctx, job.ID())
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		if job.Attempt() == 1 {
			seen[job.ID()] = [2]int{job.Item().MaxAttempts, it.MaxAttempts}
		}
		return nil
	}
	cfg := e.fast(map[string]int{q: 2})
	cfg.DefaultKind.MaxAttempts = 4
	e.start(cfg, func(w *worker.Worker) {
		w.HandleFunc("five", record, worker.KindConfig{MaxAttempts: 5})
		w.HandleFunc("by-default", record)
	})
	done := func(it core.Item) bool { return it.State == core.StateCompleted }
	e.waitFor(patience, "completed", done, ids...)
	mu.Lock()
	defer mu.Unlock()
	for id, n := range want {
		if got := seen[id]; got != [2]int{n, n} {
			t.Errorf("item %s at its first attempt: the job's MaxAttempts %d, Get's %d; want %d", id, got[0], got[1], n)
		}
		if got := e.get(id).MaxAttempts; got != n {
			t.Errorf("item %s completed: Get's MaxAttempts %d, want %d", id, got, n)
		}
	}
}
