package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/plenumdb/plenum/core"
	_ "github.com/plenumdb/plenum/sqlite" // and postgres, mysql: the DSN's form says which
	"github.com/plenumdb/plenum/worker"
)

type Photo struct{ Path string } // the args of resize; welcome's are a string
var welcome, resize = worker.NewKind[string]("email.welcome"), worker.NewKind[Photo]("photo.resize")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	store := must(core.OpenDSN(ctx, "", "jobs.db", core.Options{Migrate: true})) // or $DATABASE_URL
	queues := map[string]worker.QueueConfig{"app": {MaxWorkers: 4}}
	w := must(worker.New(store, worker.Config{Queues: queues}))
	welcome.Handle(w, func(_ context.Context, job *worker.Job[string]) error {
		return job.SetResult(fmt.Sprintf("welcomed %s on attempt %d", job.Args, job.Attempt()))
	})
	resize.Handle(w, func(_ context.Context, job *worker.Job[Photo]) error {
		if job.Attempt() == 1 { // a stand-in for a busy service: the error retries the job
			return fmt.Errorf("resizing %s: the image service is busy", job.Args.Path)
		}
		return job.SetResult(fmt.Sprintf("resized %s on attempt %d", job.Args.Path, job.Attempt()))
	}, worker.KindConfig{MaxAttempts: 3}) // retried after 1 s (core.DefaultBackoff)
	must(welcome.Enqueue(ctx, store, "ada@example.com", worker.EnqueueParams{Queue: "app"}))
	must(resize.Enqueue(ctx, store, Photo{"cat.png"}, worker.EnqueueParams{Queue: "app"}))
	must(0, w.Start(ctx))
	<-ctx.Done() // Ctrl-C or SIGTERM: running handlers get up to 10 s to finish
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	must(0, w.Stop(shutdown))
	must(0, store.Close())
}

func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}
