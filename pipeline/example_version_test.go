package pipeline_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// An order pipeline changes while an order waits for its payment: the
// new definition, version 2, adds a fraud check and a receipt. The
// program registers both versions: the order that started on version 1
// finishes on version 1's steps, and a new order runs version 2's. (A
// program that no longer registered version 1 would halt the old order
// with version_not_registered when its payment came, to revive once
// version 1 is back.)
func ExampleOptions_version() {
	dir, _ := os.MkdirTemp("", "plenum-pipeline-version")
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

	step := func(name string) pipeline.Flow[string, string] {
		return pipeline.Step(name, func(_ context.Context, s string) (string, error) { return s + ", " + name, nil })
	}
	paid := func() pipeline.Flow[string, string] {
		return pipeline.Await("paid", "payment", 0, func(_ context.Context, s string, _ struct{}, _ bool) (string, error) {
			return s + ", paid", nil
		})
	}
	v1, err1 := pipeline.Define("order", pipeline.Then(pipeline.Then(step("reserve"), paid()), step("ship")))
	v2, err2 := pipeline.Define("order", pipeline.Then(pipeline.Then(pipeline.Then(step("fraud-check"), step("reserve")), paid()),
		pipeline.Then(step("ship"), step("receipt"))), pipeline.Options{Version: 2})
	if err1 != nil || err2 != nil {
		fmt.Println(err1, err2)
		return
	}
	if err := eng.Register(v2, v1); err != nil {
		fmt.Println(err)
		return
	}
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	old, _ := v1.Trigger(ctx, eng, "order 1")
	for r, _ := eng.Get(ctx, old); r.State != pipeline.StateWaiting; r, _ = eng.Get(ctx, old) {
		time.Sleep(10 * time.Millisecond)
	}
	fresh, _ := v2.Trigger(ctx, eng, "order 2")
	for _, run := range []uuid.UUID{old, fresh} {
		_ = eng.Signal(ctx, run, "payment", struct{}{})
		r, err := eng.Wait(ctx, run)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println("version", r.Version, r.State, string(r.Output))
	}
	// Output:
	// version 1 completed "order 1, reserve, paid, ship"
	// version 2 completed "order 2, fraud-check, reserve, paid, ship, receipt"
}

// A reminder goes out a day after sign-up: the sleep is a step of its
// own, on the database clock, holding no worker slot while it sleeps and
// surviving restarts. (Here it sleeps 50 ms.)
func ExampleSleep() {
	dir, _ := os.MkdirTemp("", "plenum-pipeline-sleep")
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

	remind := pipeline.Step("remind", func(_ context.Context, user string) (string, error) {
		return "reminded " + user, nil
	})
	p, err := pipeline.Define("onboarding", pipeline.Then(pipeline.Sleep[string]("a-day", 50*time.Millisecond), remind))
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = eng.Register(p)
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	run, _ := p.Trigger(ctx, eng, "ada")
	r, err := eng.Wait(ctx, run)
	if err != nil {
		fmt.Println(err)
		return
	}
	slept := r.Steps[0]
	fmt.Println(r.State, string(r.Output), "slept at least 50 ms:", slept.FinishedAt.Sub(slept.CreatedAt) >= 50*time.Millisecond)
	// Output: completed "reminded ada" slept at least 50 ms: true
}
