package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// The step that reserves stock writes the reservation's id to the run's
// context; the step that ships, two steps later, reads it there, and the
// step in between never sees it.
func ExampleSetRunContext() {
	dir, _ := os.MkdirTemp("", "plenum-pipeline-context")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, _ := sqlite.Open(filepath.Join(dir, "app.db"))
	defer db.Close()
	store, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	w, _ := worker.New(store, worker.Config{Queues: map[string]worker.QueueConfig{"pipelines": {MaxWorkers: 4}}, PollInterval: 20 * time.Millisecond})
	eng, _ := pipeline.New(store, w, pipeline.EngineOptions{Queue: "pipelines"})

	reserve := pipeline.Step("reserve", func(ctx context.Context, order string) (string, error) {
		return order, pipeline.SetRunContext(ctx, "reservation", "R-"+order)
	})
	pack := pipeline.Step("pack", func(_ context.Context, order string) (int, error) { return 3, nil })
	ship := pipeline.Step("ship", func(ctx context.Context, boxes int) (string, error) {
		r, _, err := pipeline.RunContext[string](ctx, "reservation")
		return fmt.Sprintf("%d boxes under %s", boxes, r), err
	})
	p, err := pipeline.Define("order", pipeline.Then(reserve, pipeline.Then(pack, ship)))
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = eng.Register(p)
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	run, _ := p.Trigger(ctx, eng, "42")
	r, err := eng.Wait(ctx, run)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.State, string(r.Output))
	for _, c := range r.Context {
		fmt.Println(c.Key, string(c.Value), c.WrittenBy == r.Steps[0].Item)
	}
	// Output:
	// completed "3 boxes under R-42"
	// reservation "R-42" true
}
