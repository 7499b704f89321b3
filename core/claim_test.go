package core_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/sqlite"
)

// TestClaim_ItemIsTheStoredRow checks that a claim hands out each item as
// the database holds it after the claim, although the claim reads back only
// the columns it did not set itself: the item read with Get afterwards is
// the same, field for field.
func TestClaim_ItemIsTheStoredRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	o := openStore(t, sqlite.Dialect(), core.Options{})
	s, owner := o.store, o.owner
	_, err := s.Enqueue(ctx,
		core.ItemSpec{Queue: "q", Kind: "k", Key: "one", Payload: json.RawMessage(`{"n":1}`), Priority: 3, MaxAttempts: 7},
		core.ItemSpec{Queue: "q", Kind: "other", Payload: json.RawMessage(`[2]`)})
	if err != nil {
		t.Fatal(err)
	}
	claim := func() []core.Claim {
		t.Helper()
		cs, err := s.Claim(ctx, core.ClaimParams{Queue: "q", Owner: owner, Limit: 10, Lease: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	// A failed attempt first, so that attempt and last_error are set.
	for _, c := range claim() {
		if _, err := s.Fail(ctx, c, core.FailParams{Error: "boom", RetryIn: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	}
	var cs []core.Claim
	for deadline := time.Now().Add(time.Minute); len(cs) < 2 && time.Now().Before(deadline); {
		cs = append(cs, claim()...)
		time.Sleep(5 * time.Millisecond)
	}
	if len(cs) != 2 {
		t.Fatalf("claimed %d items again, want 2", len(cs))
	}
	for _, c := range cs {
		got, err := s.Get(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(c.Item, got) {
			t.Errorf("claimed item differs from the stored row:\nclaim %+v\nget   %+v", c.Item, got)
		}
		if c.Item.ClaimToken != c.Token || c.Item.ClaimedBy != owner || c.Item.State != core.StateClaimed || c.Item.Queue != "q" {
			t.Errorf("claim %s: token %s, by %s, state %s, queue %q", c.ID, c.Item.ClaimToken, c.Item.ClaimedBy, c.Item.State, c.Item.Queue)
		}
	}
}
