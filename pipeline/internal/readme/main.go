package main

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

func main() {
	ctx := context.Background()
	db := must(sqlite.Open("pipelines.db")) // or postgres.Open(dsn), mysql.Open(dsn), your own *sql.DB
	store := must(core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true}))
	w := must(worker.New(store, worker.Config{Queues: map[string]worker.QueueConfig{"pipelines": {MaxWorkers: 10}}}))
	eng := must(pipeline.New(store, w, pipeline.EngineOptions{Queue: "pipelines"}))

	words := func(_ context.Context, s string) ([]string, error) { return strings.Fields(s), nil }
	upper := pipeline.Step("upper", func(_ context.Context, w string) (string, error) { return strings.ToUpper(w), nil })
	joined := func(ctx context.Context, r *pipeline.Results[string]) (string, error) {
		out := make([]string, r.Len())
		err := r.Each(ctx, func(x pipeline.Result[string]) error { out[x.Index] = x.Value; return nil })
		return strings.Join(out, " "), err
	}
	exclaim := pipeline.Step("exclaim", func(_ context.Context, s string) (string, error) { return s + "!", nil })
	p := must(pipeline.Define("shout", pipeline.Then(pipeline.Expand("words", words, upper, joined), exclaim)))

	must(0, eng.Register(p))
	must(0, w.Start(ctx))
	defer w.Stop(ctx)
	run := must(p.Trigger(ctx, eng, "durable pipelines in plain go"))
	r := must(eng.Wait(ctx, run)) // until completed, halted or cancelled
	fmt.Println(r.State, string(r.Output))
}

func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}
