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

type WelcomeArgs struct {
	Address string `json:"address"`
}

// A typed handler, its outcomes, and a graceful stop.
func ExampleHandle() {
	dir, _ := os.MkdirTemp("", "plenum-worker-example")
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
		Queues:       map[string]worker.QueueConfig{"email": {MaxWorkers: 4}},
		PollInterval: 10 * time.Millisecond,
	})
	if err != nil {
		log.Fatal(err)
	}
	done := make(chan struct{})
	worker.Handle(w, "email.welcome", func(ctx context.Context, job *worker.Job[WelcomeArgs]) error {
		defer close(done)
		if job.Args.Address == "" {
			return worker.Discard(fmt.Errorf("no address")) // dead at once
		}
		// A mail service that keeps the keys it has seen sends once.
		fmt.Println("welcome", job.Args.Address, "attempt", job.Attempt())
		return job.SetResult(map[string]bool{"sent": true})
	}, worker.KindConfig{Timeout: time.Minute, MaxAttempts: 5})

	enq, err := store.Enqueue(ctx, core.ItemSpec{Queue: "email", Kind: "email.welcome", Payload: []byte(`{"address":"ada@example.com"}`)})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		log.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(time.Minute):
		log.Fatal("the handler did not run within a minute")
	}
	stop, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := w.Stop(stop); err != nil {
		log.Fatal(err)
	}
	it, _ := store.Get(ctx, enq[0].ID)
	fmt.Println(it.State, string(it.Result))
	// Output:
	// welcome ada@example.com attempt 1
	// completed {"sent":true}
}
