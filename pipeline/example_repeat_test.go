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

// A report is refreshed every 20 ms, for at most an hour, until its
// third refresh finds it complete: each refresh is one repetition, its
// own claimed item, taking effect once; after a downtime the missed
// refreshes would run in turn (RunMissed), and a refresh that keeps
// failing would be skipped over (ContinueOnError).
func ExampleRepeatUntil() {
	dir, _ := os.MkdirTemp("", "plenum-pipeline-repeat")
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

	refresh := pipeline.RepeatUntil("refresh", func(_ context.Context, report string, rep pipeline.Repetition) (string, bool, error) {
		return fmt.Sprintf("%s, refresh %d", report, rep.Index), rep.Index == 2, nil
	}, pipeline.RepeatOptions{
		Every:   20 * time.Millisecond,
		Until:   time.Hour,
		CatchUp: pipeline.RunMissed,
		OnError: pipeline.ContinueOnError,
	})
	p, err := pipeline.Define("report", refresh)
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = eng.Register(p)
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	run, _ := p.Trigger(ctx, eng, "sales")
	r, err := eng.Wait(ctx, run)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.State, string(r.Output))
	// Output: completed "sales, refresh 2"
}
