package core_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/sqlite"
)

// The shape of a worker: register, claim, do the work, complete.
func Example() {
	dir, _ := os.MkdirTemp("", "plenum-example")
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

	_, _ = store.Enqueue(ctx, core.ItemSpec{Queue: "email", Kind: "welcome", Payload: []byte(`{"to":"ada@example.com"}`)})

	owner, _ := store.RegisterOwner(ctx, core.OwnerParams{})
	claims, _ := store.Claim(ctx, core.ClaimParams{Queue: "email", Owner: owner, Limit: 10, Lease: 30 * time.Second})
	for _, c := range claims {
		fmt.Println("working on", c.Kind, string(c.Payload))
		if err := store.Complete(ctx, c, []byte(`{"sent":true}`)); err != nil {
			log.Fatal(err)
		}
	}
	// Output: working on welcome {"to":"ada@example.com"}
}

// Effects written through a fence commit together with the check that the
// claim is still held, or not at all.
func ExampleStore_Fence() {
	dir, _ := os.MkdirTemp("", "plenum-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, _ := sqlite.Open(filepath.Join(dir, "jobs.db"))
	defer db.Close()
	store, _ := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	_, _ = db.ExecContext(ctx, "CREATE TABLE invoices (id TEXT PRIMARY KEY)")

	_, _ = store.Enqueue(ctx, core.ItemSpec{Queue: "billing", Kind: "invoice", Payload: []byte(`"inv-1"`)})
	owner, _ := store.RegisterOwner(ctx, core.OwnerParams{})
	claims, _ := store.Claim(ctx, core.ClaimParams{Queue: "billing", Owner: owner, Limit: 1, Lease: time.Minute})

	held, err := store.Fence(ctx, claims[0], func(ctx context.Context, f *core.Fenced) error {
		if _, err := f.ExecContext(ctx, "INSERT INTO invoices (id) VALUES (?)", "inv-1"); err != nil {
			return err
		}
		return f.Complete(ctx, nil)
	})
	fmt.Println("held:", held, "err:", err)
	// Output: held: true err: <nil>
}

// A *sqlx.DB works through its embedded *sql.DB, and EnqueueTx takes a
// *sqlx.Tx: the items exist only if the caller's transaction commits.
func ExampleStore_EnqueueTx() {
	dir, _ := os.MkdirTemp("", "plenum-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	dsn, _ := sqlite.DSN(filepath.Join(dir, "app.db"))
	x, _ := sqlx.Open(sqlite.DriverName, dsn)
	defer x.Close()
	store, err := core.Open(ctx, x.DB, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		log.Fatal(err)
	}
	tx := x.MustBeginTx(ctx, nil)
	_, _ = store.EnqueueTx(ctx, tx, core.ItemSpec{Queue: "outbox", Kind: "order-placed"})
	_ = tx.Rollback()

	tx = x.MustBeginTx(ctx, nil)
	_, _ = store.EnqueueTx(ctx, tx, core.ItemSpec{Queue: "outbox", Kind: "order-placed"})
	_ = tx.Commit()

	counts, _ := store.Counts(ctx, "outbox")
	fmt.Println("available:", counts[core.StateAvailable])
	// Output: available: 1
}
