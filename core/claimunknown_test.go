package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
)

// claimTwo enqueues two items in queue, arms the next commit to break,
// and claims them.
func claimTwo(t *testing.T, b bundle, queue string, arm func()) ([]core.Claim, error) {
	t.Helper()
	ctx := context.Background()
	if _, err := b.store.Enqueue(ctx, core.ItemSpec{Queue: queue, Kind: "k"}, core.ItemSpec{Queue: queue, Kind: "k"}); err != nil {
		t.Fatal(err)
	}
	arm()
	return b.store.Claim(ctx, core.ClaimParams{Queue: queue, Owner: b.owner, Limit: 2, Lease: time.Minute})
}

// TestClaim_CommittedDespiteLostConnectionIsHeld checks that a claim whose
// commit went through, though the connection broke before it said so, is
// returned to its caller rather than held by nobody until its lease ends.
func TestClaim_CommittedDespiteLostConnectionIsHeld(t *testing.T) {
	t.Parallel()
	b := setup(t, core.Options{})
	cs, err := claimTwo(t, b, "q", func() { b.f.lostCommit.Store(1) })
	if err != nil || len(cs) != 2 {
		t.Fatalf("claim after a lost commit that committed: %d claims, %v; want the 2 it holds", len(cs), err)
	}
	for _, c := range cs {
		if err := b.store.Complete(context.Background(), c, nil); err != nil {
			t.Fatalf("complete %s: %v", c.ID, err)
		}
	}
}

// TestClaim_RolledBackDespiteLostConnectionHoldsNothing checks that a claim
// whose commit did not go through returns nothing, and leaves the items
// to the next claim.
func TestClaim_RolledBackDespiteLostConnectionHoldsNothing(t *testing.T) {
	t.Parallel()
	b := setup(t, core.Options{})
	cs, err := claimTwo(t, b, "q", func() { b.f.lostRollback.Store(1) })
	if err != nil || len(cs) != 0 {
		t.Fatalf("claim after a lost commit that rolled back: %d claims, %v; want none", len(cs), err)
	}
	cs, err = b.store.Claim(context.Background(), core.ClaimParams{Queue: "q", Owner: b.owner, Limit: 2, Lease: time.Minute})
	if err != nil || len(cs) != 2 {
		t.Fatalf("the next claim: %d claims, %v; want 2", len(cs), err)
	}
}
