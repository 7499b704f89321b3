package storeworkload

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
)

// workloadFlow reaches flow control's statements: limits set, read and
// deleted, keyed items enqueued (at once and delayed) and claimed lane by
// lane under concurrency and rate limits, with and without kind limits, a
// lane that runs out of work, a keyed item revived, and the wait for a
// lane's next turn, a queue without limits claimed key by key, and
// retention deleting the lanes left idle or left with a turn.
func workloadFlow(t *testing.T, db *sql.DB, d dialect.Dialect) {
	ctx := context.Background()
	must := fatal(t)
	s := open(t, db, d, core.Options{})
	owner, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{})
	must(err)

	must(s.SetLimit(ctx, core.Limit{Queue: "f", Concurrency: 2, PerProcess: 2}))
	must(s.SetLimit(ctx, core.Limit{Queue: "f", Key: "k2", Rate: 10, Per: time.Second, Burst: 2}))
	if ls, err := s.Limits(ctx, "f"); err != nil || len(ls) != 2 {
		t.Fatalf("Limits = %v, %v; want the default and k2's", ls, err)
	}
	_, err = s.Enqueue(ctx,
		core.ItemSpec{Queue: "f", FlowKey: "k1"}, core.ItemSpec{Queue: "f", FlowKey: "k1"}, core.ItemSpec{Queue: "f", FlowKey: "k1"},
		core.ItemSpec{Queue: "f", FlowKey: "k2", Cost: 1}, core.ItemSpec{Queue: "f", FlowKey: "k3", Delay: time.Hour},
		core.ItemSpec{Queue: "f"})
	must(err)
	cs, err := s.Claim(ctx, core.ClaimParams{Queue: "f", Owner: owner, Limit: 10, Lease: time.Minute})
	must(err)
	if len(cs) != 4 {
		t.Fatalf("claimed %d of the flow queue, want 4 (two of k1, k2's, the unkeyed)", len(cs))
	}
	for _, c := range cs {
		must(s.Complete(ctx, c, nil))
	}
	cs, err = s.Claim(ctx, core.ClaimParams{Queue: "f", Owner: owner, Limit: 10, Lease: time.Minute, MaxAttempts: map[string]int{"x": 1}})
	must(err)
	if len(cs) != 1 {
		t.Fatalf("claimed %d with kind limits, want k1's last", len(cs))
	}
	dead, err := s.Fail(ctx, cs[0], core.FailParams{Error: "e", Discard: true})
	must(err)
	if !dead {
		t.Fatal("a final failure left the item alive")
	}
	must(s.Revive(ctx, cs[0].ID))
	_, err = s.NextClaimAt(ctx, "f")
	must(err)
	must(s.DeleteLimit(ctx, "f", "k2"))
	must(s.DeleteLimit(ctx, "f", ""))
	// The revived item run, then a claim that finds the lanes without
	// work sets them idle, and retention four hours on deletes them.
	cs, err = s.Claim(ctx, core.ClaimParams{Queue: "f", Owner: owner, Limit: 10, Lease: time.Minute})
	must(err)
	for _, c := range cs {
		must(s.Complete(ctx, c, nil))
	}
	_, err = s.Claim(ctx, core.ClaimParams{Queue: "f", Owner: owner, Limit: 10, Lease: time.Minute})
	must(err)
	// A queue without limits is claimed key by key, where the database
	// can step through keys: its lanes are not taken and keep the turns
	// their enqueue gave them, and retention deletes them too.
	// A key with a limit of its own among them is claimed by its lane.
	must(s.SetLimit(ctx, core.Limit{Queue: "g", Key: "c", Concurrency: 1}))
	_, err = s.Enqueue(ctx, core.ItemSpec{Queue: "g", FlowKey: "a"}, core.ItemSpec{Queue: "g", FlowKey: "b"}, core.ItemSpec{Queue: "g", FlowKey: "c"})
	must(err)
	cs, err = s.Claim(ctx, core.ClaimParams{Queue: "g", Owner: owner, Limit: 10, Lease: time.Minute})
	must(err)
	if len(cs) != 3 {
		t.Fatalf("claimed %d of a queue of three keys, one limited, want 3", len(cs))
	}
	must(s.DeleteLimit(ctx, "g", "c"))
	for _, c := range cs {
		must(s.Complete(ctx, c, nil))
	}
	r, err := open(t, db, d, core.Options{ClockOffset: 4 * time.Hour}).Purge(ctx, core.PurgeParams{OlderThan: time.Hour})
	must(err)
	if r.Lanes == 0 {
		t.Errorf("Purge four hours on deleted no idle lane: %+v", r)
	}
}
