package worker_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/seal"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// Ring seals the args and results of Payroll. It is declared with the
// kind, and given its keys at start-up (from a secret store, in a real
// program): rotating is a Set with the new key current and the old one
// kept.
var (
	Ring    = new(seal.Keyring)
	Payroll = worker.NewKind("payroll.pay", worker.KindOptions[PayArgs]{Codec: Ring})
)

type PayArgs struct {
	IBAN  string `json:"iban"`
	Cents int    `json:"cents"`
}

// A kind whose args and results are stored sealed: the handler gets
// them in clear, the database and the dashboard see only the key id.
func ExampleKindOptions_sealed() {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	if err := Ring.Set("2026-12", map[string][]byte{"2026-12": key}); err != nil {
		log.Fatal(err)
	}

	dir, _ := os.MkdirTemp("", "plenum-seal-example")
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
		Queues:       map[string]worker.QueueConfig{"pay": {MaxWorkers: 1}},
		PollInterval: 10 * time.Millisecond,
	})
	if err != nil {
		log.Fatal(err)
	}
	Payroll.Handle(w, func(ctx context.Context, job *worker.Job[PayArgs]) error {
		fmt.Println("pay", job.Args.Cents, "to", job.Args.IBAN)
		return job.SetResult("paid")
	})

	res, err := Payroll.Enqueue(ctx, store, PayArgs{IBAN: "DE89 3704 0044", Cents: 12500}, worker.EnqueueParams{Queue: "pay"})
	if err != nil {
		log.Fatal(err)
	}
	it, _ := store.Get(ctx, res.ID)
	id, sealed := seal.Inspect(it.Payload)
	fmt.Println("stored sealed:", sealed, "key id", id)

	if err := w.Start(ctx); err != nil {
		log.Fatal(err)
	}
	for it.State != core.StateCompleted {
		time.Sleep(10 * time.Millisecond)
		it, _ = store.Get(ctx, res.ID)
	}
	result, err := worker.OpenResult(Ring, it)
	fmt.Println("result:", string(result), err)
	if err := w.Stop(ctx); err != nil {
		log.Fatal(err)
	}
	// Output:
	// stored sealed: true key id 2026-12
	// pay 12500 to DE89 3704 0044
	// result: "paid" <nil>
}
