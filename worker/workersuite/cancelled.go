package workersuite

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
)

// handlerReturnsAfterCancel checks handlers that go on after their item
// was cancelled: one that ignores its context and returns success with a
// result, one that then tries its fence. Neither changes the cancelled
// item, the fence's function never runs, and both outcomes are reported
// as lost claims.
func handlerReturnsAfterCancel(e *env) {
	t := e.t
	const q = "late"
	audit := e.auditTable()
	ids := e.enqueue(core.ItemSpec{Queue: q, Kind: "ignore"}, core.ItemSpec{Queue: q, Kind: "fence"})
	started := make(chan uuid.UUID, 2)
	type ended struct {
		id  uuid.UUID
		err error
	}
	returned := make(chan ended, 2)
	var mu sync.Mutex
	lost := map[uuid.UUID]bool{}
	cfg := e.fast(map[string]int{q: 2})
	cfg.Hooks = worker.HookFunc(func(_ context.Context, ev worker.Event) {
		if ev.Kind == worker.EventLost {
			mu.Lock()
			lost[ev.Item.ID] = true
			mu.Unlock()
		}
	})
	ran := false
	e.start(cfg, func(w *worker.Worker) {
		w.HandleFunc("ignore", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
			started <- job.ID()
			<-ctx.Done()
			err := job.SetResult(map[string]string{"done": "anyway"})
			returned <- ended{job.ID(), err}
			return err
		})
		w.HandleFunc("fence", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
			started <- job.ID()
			<-ctx.Done()
			// A handler that does not look at ctx's error, and fences
			// with a context of its own.
			err := job.Fence(context.WithoutCancel(ctx), func(ctx context.Context, f *core.Fenced) error {
				ran = true
				_, err := f.ExecContext(ctx, e.d.Rebind("INSERT INTO "+audit+" (id) VALUES (?)"), job.ID().String())
				return err
			})
			returned <- ended{job.ID(), err}
			return nil
		})
	})
	for range 2 {
		select {
		case <-started:
		case <-time.After(20 * time.Second):
			t.Fatal("the handlers never started")
		}
	}
	before := map[uuid.UUID]core.Item{}
	for _, id := range ids {
		if err := e.store.Cancel(e.ctx, id); err != nil {
			t.Fatal(err)
		}
		before[id] = e.get(id)
	}
	for range 2 {
		select {
		case r := <-returned:
			if r.id == ids[1] && !errors.Is(r.err, core.ErrClaimLost) {
				t.Errorf("Fence after the cancel = %v, want ErrClaimLost", r.err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the cancelled handlers' contexts never ended")
		}
	}
	end := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		n := len(lost)
		mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("%d lost-claim events after the handlers returned, want 2", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ran {
		t.Error("the fence's function ran after the cancel")
	}
	if n := e.count(audit); n != 0 {
		t.Errorf("%d effects after the cancel, want 0", n)
	}
	for _, id := range ids {
		if it := e.get(id); it.State != core.StateCancelled || it.Result != nil || it.Attempt != before[id].Attempt || it.LastError != before[id].LastError {
			t.Errorf("item %s after its handler returned: %s, result %s, attempt %d, error %q; want cancelled as it was", it.Kind, it.State, it.Result, it.Attempt, it.LastError)
		}
	}
}
