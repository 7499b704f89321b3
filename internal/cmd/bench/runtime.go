package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
)

// runtimeDrain runs o.Workers workers of the runtime, each with o.Batch
// slots of a no-op handler, on queue until n items completed, then stops
// them. It is the runtime's claim+complete: claims sized to free slots, a
// handler goroutine per item, completions batched, heartbeats running.
func runtimeDrain(ctx context.Context, st *core.Store, queue string, n int, o benchOptions) error {
	var done atomic.Int64
	all := make(chan struct{})
	hooks := worker.HookFunc(func(_ context.Context, e worker.Event) {
		if e.Kind == worker.EventCompleted && done.Add(1) == int64(n) {
			close(all)
		}
	})
	ws := make([]*worker.Worker, 0, o.Workers)
	defer func() {
		for _, w := range ws {
			_ = w.Stop(context.WithoutCancel(ctx))
		}
	}()
	cfg := worker.Config{
		Queues:       map[string]worker.QueueConfig{queue: {MaxWorkers: o.Batch}},
		PollInterval: 10 * time.Millisecond,
		ReapInterval: -1,
		Hooks:        hooks,
	}
	cfgs := make([]worker.Config, o.Workers)
	for i := range cfgs {
		cfgs[i] = cfg
	}
	// The workers share st's pool: bound it at what they need together.
	worker.FitPool(st, cfgs...)
	for range o.Workers {
		w, err := worker.New(st, cfg)
		if err != nil {
			return err
		}
		w.HandleFunc("bench", func(context.Context, *worker.Job[json.RawMessage]) error { return nil })
		if err := w.Start(ctx); err != nil {
			return err
		}
		ws = append(ws, w)
	}
	select {
	case <-all:
	case <-ctx.Done():
		return ctx.Err()
	}
	for _, w := range ws {
		if err := w.Stop(ctx); err != nil {
			return err
		}
	}
	ws = nil
	if got := done.Load(); got != int64(n) {
		return fmt.Errorf("%d completions, want %d", got, n)
	}
	return nil
}
