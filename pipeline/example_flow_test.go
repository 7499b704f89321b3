package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// An import of a tenant's files: the files are fetched in parallel, but
// at most two fetches of one tenant at once, in every process, because
// the fetch step's items carry the tenant (from the run's input) as
// their flow key, and the key has a concurrency limit.
func ExampleStepOptions_flowKey() {
	dir, _ := os.MkdirTemp("", "plenum-pipeline-flow")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, _ := sqlite.Open(filepath.Join(dir, "app.db"))
	defer db.Close()
	store, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := store.SetLimit(ctx, core.Limit{Queue: "pipelines", Key: "acme", Concurrency: 2}); err != nil {
		fmt.Println(err)
		return
	}
	w, _ := worker.New(store, worker.Config{Queues: map[string]worker.QueueConfig{"pipelines": {MaxWorkers: 8}}, PollInterval: 20 * time.Millisecond})
	eng, _ := pipeline.New(store, w, pipeline.EngineOptions{Queue: "pipelines"})

	type importRun struct {
		Tenant string   `json:"tenant"`
		Files  []string `json:"files"`
	}
	var running, most atomic.Int64
	fetch := pipeline.Step("fetch", func(_ context.Context, file string) (int, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(20 * time.Millisecond) // fetch the file
		return len(file), nil
	}, pipeline.StepOptions{RunFlowKey: pipeline.FlowKeyFrom(func(in importRun) string { return in.Tenant })})
	files := func(_ context.Context, in importRun) ([]string, error) { return in.Files, nil }
	total := func(ctx context.Context, r *pipeline.Results[int]) (int, error) {
		sum := 0
		err := r.Each(ctx, func(x pipeline.Result[int]) error { sum += x.Value; return nil })
		return sum, err
	}
	p, err := pipeline.Define("import", pipeline.Expand("files", files, fetch, total))
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = eng.Register(p)
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	run, _ := p.Trigger(ctx, eng, importRun{Tenant: "acme", Files: []string{"a.csv", "b.csv", "c.csv", "d.csv", "e.csv", "f.csv"}})
	r, err := eng.Wait(ctx, run)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.State, string(r.Output), "bytes; at most two at once:", most.Load() <= 2)
	// Output: completed 30 bytes; at most two at once: true
}
