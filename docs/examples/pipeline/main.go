package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

type Order struct{ Items []string }

func main() {
	path := flag.String("db", filepath.Join(os.TempDir(), "plenum-pipeline.db"), "the SQLite file")
	flag.Parse()
	ctx := context.Background()
	db := must(sqlite.Open(*path))
	store := must(core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true}))
	queues := map[string]worker.QueueConfig{"runs": {MaxWorkers: 4}}
	w := must(worker.New(store, worker.Config{Queues: queues}))
	eng := must(pipeline.New(store, w, pipeline.EngineOptions{Queue: "runs"}))
	items := func(_ context.Context, o Order) ([]string, error) { return o.Items, nil }
	price := pipeline.Step("price", func(_ context.Context, item string) (int, error) {
		return 100 * len(item), nil // a stand-in for a price lookup, in cents
	})
	total := func(ctx context.Context, r *pipeline.Results[int]) (int, error) {
		sum := 0
		err := r.Each(ctx, func(x pipeline.Result[int]) error { sum += x.Value; return nil })
		return sum, err
	}
	approve := pipeline.Await("approve", "approved", 0, // no timeout: it waits for the signal
		func(ctx context.Context, cents int, by string, _ bool) (string, error) {
			o, err := pipeline.RunInput[Order](ctx) // the run's input, in any step
			return fmt.Sprintf("%d items, %d cents, approved by %s", len(o.Items), cents, by), err
		})
	flow := pipeline.Then(pipeline.Expand("prices", items, price, total), approve)
	p := must(pipeline.Define("checkout", flow))
	must(0, eng.Register(p))
	must(0, w.Start(ctx))
	run := must(p.Trigger(ctx, eng, Order{Items: []string{"tea", "milk", "honey"}}))
	must(0, eng.Signal(ctx, run, "approved", "ada")) // kept for the step until it waits
	r := must(eng.Wait(ctx, run))
	fmt.Println(r.State, string(r.Output))
	must(0, w.Stop(ctx)) // nothing runs now: Stop deregisters the worker
	must(0, db.Close())
}

func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}
