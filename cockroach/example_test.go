package cockroach_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/plenumdb/plenum/cockroach"
	"github.com/plenumdb/plenum/core"
)

// Open a store on CockroachDB, creating its tables, and run one item
// through it. The store retries serializable transactions up to 50 times
// by default, and leases are at least four times the clock offset (2 s).
func Example() {
	ctx := context.Background()
	db, err := cockroach.Open(os.Getenv("PLENUM_COCKROACH_DSN")) // postgresql://user@host:26257/db?sslmode=verify-full
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	store, err := core.Open(ctx, db, cockroach.Dialect(), core.Options{Migrate: true})
	if err != nil {
		log.Fatal(err)
	}

	if _, err := store.Enqueue(ctx, core.ItemSpec{Queue: "email", Kind: "welcome"}); err != nil {
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
	fmt.Println("shortest lease:", store.MinLease())
}
