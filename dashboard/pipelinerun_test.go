package dashboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/worker"
)

// runPipelines registers defs on an engine of queue "pipe" over st and
// starts its worker, stopped when t ends.
func runPipelines(t *testing.T, ctx context.Context, st *core.Store, defs ...pipeline.Definition) *pipeline.Engine {
	t.Helper()
	cfg := worker.Config{Queues: map[string]worker.QueueConfig{"pipe": {MaxWorkers: 4}}, PollInterval: 20 * time.Millisecond}
	worker.FitPool(st, cfg)
	w, err := worker.New(st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := pipeline.New(st, w, pipeline.EngineOptions{Queue: "pipe"})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Register(defs...); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Stop(context.Background()) })
	return eng
}

// squares is an expand named name of the first n of 1, 2, 3 into their
// squares, collapsed into their sum.
func squares(name string) pipeline.Flow[int, int] {
	upTo := func(_ context.Context, n int) ([]int, error) { return []int{1, 2, 3}[:n], nil }
	square := pipeline.Step("square", func(_ context.Context, n int) (int, error) { return n * n, nil })
	sum := func(ctx context.Context, r *pipeline.Results[int]) (int, error) {
		t := 0
		return t, r.Each(ctx, func(x pipeline.Result[int]) error { t += x.Value; return nil })
	}
	return pipeline.Expand(name, upTo, square, sum)
}
