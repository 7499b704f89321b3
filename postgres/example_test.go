package postgres_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/postgres"
)

// Open a store on PostgreSQL, creating its tables, and run one item
// through it.
func Example() {
	ctx := context.Background()
	db, err := postgres.Open(os.Getenv("PLENUM_POSTGRES_DSN")) // postgres://user:password@host:5432/db
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	store, err := core.Open(ctx, db, postgres.Dialect(), core.Options{Migrate: true})
	if err != nil {
		log.Fatal(err)
	}

	if _, err := store.Enqueue(ctx, core.ItemSpec{Queue: "email", Kind: "welcome", Payload: []byte(`{"to":"ada@example.com"}`)}); err != nil {
		log.Fatal(err)
	}
	owner, err := store.RegisterOwner(ctx, core.RegisterOwnerParams{})
	if err != nil {
		log.Fatal(err)
	}
	claims, err := store.Claim(ctx, core.ClaimParams{Queue: "email", Owner: owner, Limit: 10, Lease: 30 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range claims {
		fmt.Println("working on", c.Kind)
		if err := store.Complete(ctx, c, nil); err != nil {
			log.Fatal(err)
		}
	}
}

// An application with a *pgxpool.Pool shares it with the store through
// stdlib.OpenDBFromPool. The pool's run-time parameters put the tables in
// the schema jobs (which must exist).
func Example_pgxpool() {
	ctx := context.Background()
	cfg, err := pgxpool.ParseConfig(os.Getenv("PLENUM_POSTGRES_DSN"))
	if err != nil {
		log.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = "jobs"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	db := stdlib.OpenDBFromPool(pool)
	defer db.Close() // leaves the pool open
	store, err := core.Open(ctx, db, postgres.Dialect(), core.Options{Migrate: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("tables under prefix", store.Prefix())
}
