package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
)

// fairness runs the fairness scenario on queue: o.Items items of one key
// enqueued, o.Workers runtime workers of o.Batch slots started on them,
// then, once the first of them completed, flowSmall items of a second key
// in one enqueue. It returns the second key's pickup latency, from just
// before its enqueue to each handler's start, and how many of the first
// key's items were done when the last of them started; it returns once
// the first key's items are all done. keyed false runs the same items
// without flow keys: the small tenant then queues behind the backlog.
func fairness(ctx context.Context, st *core.Store, queue string, o benchOptions, keyed bool) (fairnessRun, error) {
	run := fairnessRun{Big: o.Items}
	big, small := flowVariant{}, ""
	if keyed {
		big, small = flowVariant{keys: 1, run: o.Items}, "small"
	}
	if err := flowEnqueue(ctx, st, queue, o.Items, big); err != nil {
		return run, err
	}
	var bigDone atomic.Int64
	first, all := make(chan struct{}), make(chan struct{})
	started := make(chan time.Time, flowSmall)
	hooks := worker.HookFunc(func(_ context.Context, e worker.Event) {
		if e.Kind != worker.EventCompleted || e.Item.Kind != "bench" {
			return
		}
		switch bigDone.Add(1) {
		case 1:
			close(first)
			if o.Items == 1 {
				close(all)
			}
		case int64(o.Items):
			close(all)
		}
	})
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
	worker.FitPool(st, cfgs...)
	var ws []*worker.Worker
	defer func() {
		for _, w := range ws {
			_ = w.Stop(context.WithoutCancel(ctx))
		}
	}()
	for range o.Workers {
		w, err := worker.New(st, cfg)
		if err != nil {
			return run, err
		}
		w.HandleFunc("bench", func(context.Context, *worker.Job[json.RawMessage]) error { return nil })
		w.HandleFunc("small", func(context.Context, *worker.Job[json.RawMessage]) error {
			started <- time.Now()
			return nil
		})
		if err := w.Start(ctx); err != nil {
			return run, err
		}
		ws = append(ws, w)
	}
	timeout := time.After(10 * time.Minute)
	select {
	case <-first:
	case <-timeout:
		return run, fmt.Errorf("no item of the first key completed within 10 minutes")
	case <-ctx.Done():
		return run, ctx.Err()
	}
	specs := make([]core.ItemSpec, flowSmall)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: queue, Kind: "small", FlowKey: small}
	}
	before := time.Now()
	if _, err := st.Enqueue(ctx, specs...); err != nil {
		return run, err
	}
	took := make([]time.Duration, 0, flowSmall)
	for len(took) < flowSmall {
		select {
		case at := <-started:
			took = append(took, at.Sub(before))
		case <-timeout:
			return run, fmt.Errorf("%d of the second key's %d items started within 10 minutes", len(took), flowSmall)
		case <-ctx.Done():
			return run, ctx.Err()
		}
	}
	run.BigDone = int(bigDone.Load())
	run.latencyRow = latencyRowOf("small key", took)
	run.Max = slices.Max(took)
	// The rest of the backlog is worked off too, so that no available
	// item is left behind for what the run measures next.
	select {
	case <-all:
	case <-timeout:
		return run, fmt.Errorf("%d of the first key's %d items completed within 10 minutes", bigDone.Load(), o.Items)
	case <-ctx.Done():
		return run, ctx.Err()
	}
	for _, w := range ws {
		if err := w.Stop(ctx); err != nil {
			return run, err
		}
	}
	ws = nil
	return run, nil
}
