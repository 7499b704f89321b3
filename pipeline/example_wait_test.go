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

// A shipment waits until its label is printed: the check runs every
// 20 ms at first, then less often, up to every 100 ms, for at most an
// hour, and gives the label's number; between checks the step holds no
// worker slot. Past the hour, the run would take the flow given for the
// timeout (here: ask for a new label).
func ExampleWaitUntil() {
	dir, _ := os.MkdirTemp("", "plenum-pipeline-wait")
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

	var checks atomic.Int32
	printed := func(_ context.Context, order string) (string, bool, error) {
		// Say the printer answers on the third look.
		return "label-7 for " + order, checks.Add(1) == 3, nil
	}
	reprint := pipeline.Step("reprint", func(_ context.Context, order string) (string, error) {
		return "new label for " + order, nil
	})
	labelled := pipeline.WaitUntil("labelled", printed, reprint, pipeline.WaitOptions{
		Every:   pipeline.Backoff{Initial: 20 * time.Millisecond, Factor: 2, Max: 100 * time.Millisecond},
		Timeout: time.Hour,
	})
	p, err := pipeline.Define("ship", labelled)
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = eng.Register(p)
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	run, _ := p.Trigger(ctx, eng, "order-12")
	r, err := eng.Wait(ctx, run)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.State, string(r.Output), "after", checks.Load(), "checks")
	// Output: completed "label-7 for order-12" after 3 checks
}
