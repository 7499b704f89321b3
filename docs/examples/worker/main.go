package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

type Photo struct{ Path string }

var welcome, resize = worker.NewKind[string]("email.welcome"), worker.NewKind[Photo]("photo.resize")

func main() {
	path := flag.String("db", filepath.Join(os.TempDir(), "plenum-worker.db"), "the SQLite file")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	db := must(sqlite.Open(*path))
	store := must(core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true}))
	queues := map[string]worker.QueueConfig{"app": {MaxWorkers: 4}}
	w := must(worker.New(store, worker.Config{Queues: queues}))
	welcome.Handle(w, func(_ context.Context, job *worker.Job[string]) error {
		_, err := fmt.Printf("welcomed %s on attempt %d\n", job.Args, job.Attempt())
		return err
	})
	resize.Handle(w, func(_ context.Context, job *worker.Job[Photo]) error {
		if job.Attempt() == 1 { // a stand-in for a busy service: the error retries the job
			return fmt.Errorf("resizing %s: the image service is busy", job.Args.Path)
		}
		_, err := fmt.Printf("resized %s on attempt %d\n", job.Args.Path, job.Attempt())
		return err
	}, worker.KindConfig{MaxAttempts: 3, Backoff: func(int) time.Duration { return time.Second }})
	app := worker.EnqueueParams{Queue: "app"}
	must(welcome.EnqueueMany(ctx, store, []string{"ada@example.com", "grace@example.com"}, app))
	must(resize.EnqueueMany(ctx, store, []Photo{{"cat.png"}, {"dog.png"}}, app))
	must(0, w.Start(ctx))
	<-ctx.Done() // Ctrl-C or SIGTERM: running handlers get up to 10 s to finish
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	must(0, w.Stop(shutdown))
	must(0, db.Close())
	fmt.Println("stopped cleanly")
}

func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}
