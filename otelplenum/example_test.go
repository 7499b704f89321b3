package otelplenum_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/otelplenum"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// The enqueue hook goes to the store, the middleware and hooks to the
// worker: the handler's span is a child of the span that enqueued its
// item, in whatever process the item runs.
func Example() {
	dir, _ := os.MkdirTemp("", "otelplenum-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))

	tel, err := otelplenum.New(otelplenum.Config{TracerProvider: tp})
	if err != nil {
		log.Fatal(err)
	}
	db, err := sqlite.Open(filepath.Join(dir, "jobs.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	store, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true, OnEnqueue: tel.EnqueueHook()})
	if err != nil {
		log.Fatal(err)
	}
	w, err := worker.New(store, worker.Config{
		Queues:       map[string]worker.QueueConfig{"email": {MaxWorkers: 2}},
		PollInterval: 10 * time.Millisecond,
		Middleware:   []worker.Middleware{tel.Middleware(store)},
		Hooks:        tel.Hooks(),
	})
	if err != nil {
		log.Fatal(err)
	}
	done := make(chan struct{})
	worker.Handle(w, "welcome", func(ctx context.Context, job *worker.Job[string]) error {
		defer close(done)
		return nil
	})

	reqCtx, req := tp.Tracer("app").Start(ctx, "POST /signup")
	if _, err := store.Enqueue(reqCtx, core.ItemSpec{Queue: "email", Kind: "welcome", Payload: []byte(`"ada@example.com"`)}); err != nil {
		log.Fatal(err)
	}
	req.End()
	if err := w.Start(ctx); err != nil {
		log.Fatal(err)
	}
	<-done
	if err := w.Stop(ctx); err != nil {
		log.Fatal(err)
	}
	for _, s := range spans.GetSpans() {
		fmt.Println(s.Name, s.SpanKind, "child of the request:", s.Parent.SpanID() == req.SpanContext().SpanID())
	}
	// Output:
	// POST /signup internal child of the request: false
	// process welcome consumer child of the request: true
}
