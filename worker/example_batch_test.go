package worker_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// NewsletterArgs are the args of one newsletter e-mail.
type NewsletterArgs struct {
	Address string `json:"address"`
}

// Newsletter's items are sent in batches, by one call for many.
var Newsletter = worker.NewKind[NewsletterArgs]("email.newsletter")

// A batch handler: one call for up to MaxBatch items, each item's outcome
// set on its job; the ones left unset take the handler's returned error.
func ExampleHandleBatch() {
	dir, _ := os.MkdirTemp("", "plenum-batch-example")
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
		Queues:       map[string]worker.QueueConfig{"email": {MaxWorkers: 10}},
		PollInterval: 10 * time.Millisecond,
	})
	if err != nil {
		log.Fatal(err)
	}
	done := make(chan struct{})
	Newsletter.HandleBatch(w, func(ctx context.Context, jobs []*worker.Job[NewsletterArgs]) error {
		fmt.Println("one call for", len(jobs), "e-mails")
		for _, job := range jobs {
			if strings.HasSuffix(job.Args.Address, ".invalid") {
				job.Dead(errors.New("no such domain"))
			}
		}
		close(done)
		return nil // the others were sent
	}, worker.BatchConfig{MaxBatch: 100})

	to := []NewsletterArgs{{Address: "ada@example.com"}, {Address: "bob@example.invalid"}, {Address: "cy@example.com"}}
	res, err := Newsletter.EnqueueMany(ctx, store, to, worker.EnqueueParams{Queue: "email"})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		log.Fatal(err)
	}
	<-done
	stop, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := w.Stop(stop); err != nil { // waits for the batch's outcomes
		log.Fatal(err)
	}
	for i, r := range res {
		it, err := store.Get(ctx, r.ID)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(strings.TrimSpace(fmt.Sprint(to[i].Address, " ", it.State, " ", it.LastError)))
	}
	// Output:
	// one call for 3 e-mails
	// ada@example.com completed
	// bob@example.invalid dead discarded: no such domain
	// cy@example.com completed
}
