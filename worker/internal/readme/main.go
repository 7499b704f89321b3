package main

import (
	"context"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

type Welcome struct{ To string }

var welcome = worker.NewKind[Welcome]("welcome") // the kind's name and args type, once

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	db := must(sqlite.Open("jobs.db")) // or postgres.Open(dsn), mysql.Open(dsn), your own *sql.DB
	store := must(core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true}))
	w := must(worker.New(store, worker.Config{Queues: map[string]worker.QueueConfig{"email": {MaxWorkers: 10}}}))
	welcome.Handle(w, func(ctx context.Context, job *worker.Job[Welcome]) error {
		return job.SetResult("welcome, " + job.Args.To) // send it here; give the mailer job.IdempotencyKey()
	}, worker.KindConfig{Timeout: time.Minute, MaxAttempts: 5})
	must(welcome.Enqueue(ctx, store, Welcome{To: "ada"}, worker.EnqueueParams{Queue: "email"}))
	must(0, w.Start(ctx))
	<-ctx.Done() // Ctrl-C or SIGTERM (a container's stop): running handlers get up to 10 s to finish
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	must(0, w.Stop(shutdown))
}

func must[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}
