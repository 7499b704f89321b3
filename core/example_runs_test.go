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

// A run of two steps that waits for a person's approval in between: the
// first step hands over to the second with Then; the second waits for a
// signal, which may come before or after it asks.
func ExampleFenced_Await() {
	dir, _ := os.MkdirTemp("", "plenum-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := sqlite.Open(filepath.Join(dir, "runs.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	store, _ := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	owner, _ := store.RegisterOwner(ctx, core.RegisterOwnerParams{})
	claim := func(queue string) []core.Claim {
		cs, _ := store.Claim(ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: 1, Lease: time.Minute})
		return cs
	}

	run, _, _ := store.CreateRun(ctx, core.RunSpec{Name: "expense", Key: "exp-42"}, core.ItemSpec{Queue: "draft"})

	draft := claim("draft")[0]
	_, _ = store.Fence(ctx, draft, func(ctx context.Context, f *core.Fenced) error {
		_, err := f.Then(ctx, core.ItemSpec{Queue: "approve"}, []byte(`{"amount":120}`))
		return err
	})

	await := func(c core.Claim) {
		_, _ = store.Fence(ctx, c, func(ctx context.Context, f *core.Fenced) error {
			r, err := f.Await(ctx, core.AwaitParams{Name: "approved", Timeout: 24 * time.Hour})
			switch {
			case err != nil:
				return err
			case r.Waiting:
				fmt.Println("waiting for approval")
				return nil
			case r.TimedOut:
				fmt.Println("no approval in time")
			default:
				fmt.Println("approved by", string(r.Signal.Payload))
			}
			_, _, err = f.UpdateRun(ctx, core.RunUpdate{Run: c.Run, From: []core.RunState{core.RunRunning}, To: core.RunCompleted})
			if err != nil {
				return err
			}
			return f.Complete(ctx, nil)
		})
	}
	await(claim("approve")[0])
	sent, _ := store.Signal(ctx, core.SignalSpec{Run: run.ID, Name: "approved", Key: "by-ann", Payload: []byte(`"ann"`)})
	fmt.Println("signal woke", sent.Woken)
	await(claim("approve")[0])

	r, _ := store.GetRun(ctx, run.ID)
	fmt.Println("run", r.State)
	// Output:
	// waiting for approval
	// signal woke 1
	// approved by "ann"
	// run completed
}
