package worker_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// Welcome is declared once: its name and its args type serve the handler
// and every enqueue.
var Welcome = worker.NewKind[WelcomeArgs]("email.welcome")

// A kind bound to its args type: the handler takes a Job[WelcomeArgs],
// and enqueues take a WelcomeArgs, never raw JSON.
func ExampleKind() {
	dir, _ := os.MkdirTemp("", "plenum-kind-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := sqlite.Open(filepath.Join(dir, "jobs.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	store, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		log.Fatal(err)
	}
	w, err := worker.New(store, worker.Config{
		Queues:       map[string]worker.QueueConfig{"email": {MaxWorkers: 1}},
		PollInterval: 10 * time.Millisecond,
	})
	if err != nil {
		log.Fatal(err)
	}
	done := make(chan struct{}, 3)
	Welcome.Handle(w, func(ctx context.Context, job *worker.Job[WelcomeArgs]) error {
		fmt.Println("welcome", job.Args.Address)
		done <- struct{}{}
		return nil
	})

	email := worker.EnqueueParams{Queue: "email"}
	if _, err := Welcome.Enqueue(ctx, store, WelcomeArgs{Address: "ada@example.com"}, email); err != nil {
		log.Fatal(err)
	}
	// Many in one transaction, or inside your own with EnqueueTx.
	more := []WelcomeArgs{{Address: "bob@example.com"}, {Address: "cy@example.com"}}
	if _, err := Welcome.EnqueueMany(ctx, store, more, email); err != nil {
		log.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		log.Fatal(err)
	}
	for range 3 {
		<-done
	}
	stop, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := w.Stop(stop); err != nil {
		log.Fatal(err)
	}
	// Output:
	// welcome ada@example.com
	// welcome bob@example.com
	// welcome cy@example.com
}
