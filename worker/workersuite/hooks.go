package workersuite

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
)

// barrierFiredEvent fans two parents out: one into three
// children, whose last completion (in the worker's CompleteMany) fires its
// barrier, and one into none, whose barrier fires as the handler's Expand
// seals it. Each firing is one EventBarrierFired naming the barrier and its
// join, whose item the worker then runs. The event follows the firing's
// commit, so the join may run before it is heard: the test waits for both.
func barrierFiredEvent(e *env) {
	t := e.t
	const q, joins = "fan", "fan-joins"
	parents := e.enqueue(
		core.ItemSpec{Queue: q, Kind: "parent", Payload: json.RawMessage(`3`)},
		core.ItemSpec{Queue: q, Kind: "parent", Payload: json.RawMessage(`0`)},
	)
	var mu sync.Mutex
	barriers := map[uuid.UUID]uuid.UUID{} // barrier -> parent
	var heard []worker.Event
	fired := make(chan struct{}, 8)
	cfg := e.fast(map[string]int{q: 4, joins: 2})
	cfg.Hooks = worker.HookFunc(func(_ context.Context, ev worker.Event) {
		if ev.Kind == worker.EventBarrierFired {
			mu.Lock()
			heard = append(heard, ev)
			mu.Unlock()
			fired <- struct{}{}
		}
	})
	joined := make(chan uuid.UUID, 4)
	e.start(cfg, func(w *worker.Worker) {
		worker.Handle(w, "parent", func(ctx context.Context, job *worker.Job[int]) error {
			var kids []core.ChildSpec
			for i := range job.Args {
				kids = append(kids, core.ChildSpec{Key: fmt.Sprint(i), Kind: "child"})
			}
			r, err := e.store.Expand(ctx, job.Claim(), core.ExpandParams{
				Barrier: core.BarrierSpec{Name: "fan", Join: core.JoinSpec{Queue: joins, Kind: "join"}},
				Next: func(context.Context, string) (core.ChildPage, error) {
					return core.ChildPage{Children: kids, Done: true}, nil
				},
			})
			if err != nil {
				return err
			}
			mu.Lock()
			barriers[r.Barrier.ID] = job.ID()
			mu.Unlock()
			return nil
		})
		w.HandleFunc("child", func(ctx context.Context, job *worker.Job[json.RawMessage]) error { return nil })
		w.HandleFunc("join", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
			joined <- job.ID()
			return nil
		})
	})
	ran := map[uuid.UUID]bool{}
	for range 2 {
		select {
		case id := <-joined:
			ran[id] = true
		case <-time.After(30 * time.Second):
			t.Fatalf("joins ran: %v, want 2", ran)
		}
	}
	e.waitFor(10*time.Second, "completed", func(it core.Item) bool { return it.State == core.StateCompleted }, parents...)
	for n := 0; n < 2; n++ {
		select {
		case <-fired:
		case <-time.After(30 * time.Second):
			mu.Lock()
			defer mu.Unlock()
			t.Fatalf("%d barrier-fired events within 30s, want 2: %+v", len(heard), heard)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(heard) != 2 {
		t.Fatalf("%d barrier-fired events, want 2: %+v", len(heard), heard)
	}
	seen := map[uuid.UUID]bool{}
	for _, ev := range heard {
		b := ev.Barrier
		parent, ok := barriers[b.ID]
		if !ok || seen[b.ID] || ev.Queue != joins || b.JoinQueue != joins || b.JoinKind != "join" || b.OwnerID != parent || !ran[b.JoinItemID] {
			t.Errorf("event %+v: want each of the barriers %v once, its join in %q run", ev, barriers, joins)
		}
		seen[b.ID] = true
		if want := map[uuid.UUID]int64{parents[0]: 3, parents[1]: 0}[parent]; b.Expected != want || b.Arrived != want {
			t.Errorf("barrier of %s fired with %d/%d arrived, want %d", parent, b.Arrived, b.Expected, want)
		}
	}
}
