package core_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/sqlite"
)

// A traced context hears of the barriers its store calls fire, once each
// firing committed.
func ExampleWithTrace() {
	dir, _ := os.MkdirTemp("", "plenum-trace")
	defer os.RemoveAll(dir)
	db, err := sqlite.Open(filepath.Join(dir, "jobs.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	store, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		log.Fatal(err)
	}
	traced := core.WithTrace(ctx, &core.Trace{BarrierFired: func(_ context.Context, b core.FiredBarrier) {
		fmt.Printf("barrier %q fired after %d children; join %s in %q\n", b.Name, b.Arrived, b.JoinKind, b.JoinQueue)
	}})

	owner, _ := store.RegisterOwner(ctx, core.RegisterOwnerParams{})
	claim := func(queue string) []core.Claim {
		cs, err := store.Claim(ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: 10, Lease: time.Minute})
		if err != nil {
			log.Fatal(err)
		}
		return cs
	}
	_, _ = store.Enqueue(ctx, core.ItemSpec{Queue: "reports", Kind: "build"})
	parent := claim("reports")[0]
	pages := []core.ChildSpec{{Key: "1", Kind: "page"}, {Key: "2", Kind: "page"}}
	if _, err := store.Expand(ctx, parent, core.ExpandParams{
		Barrier: core.BarrierSpec{Name: "pages", Join: core.JoinSpec{Queue: "reports", Kind: "assemble"}},
		Next: func(context.Context, string) (core.ChildPage, error) {
			return core.ChildPage{Children: pages, Done: true}, nil
		},
		CompleteParent: true,
	}); err != nil {
		log.Fatal(err)
	}
	var done []core.Completion
	for _, c := range claim("reports") {
		done = append(done, core.Completion{Claim: c})
	}
	if _, err := store.CompleteMany(traced, done); err != nil {
		log.Fatal(err)
	}
	// Output: barrier "pages" fired after 2 children; join assemble in "reports"
}
