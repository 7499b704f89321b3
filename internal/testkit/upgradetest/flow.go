package upgradetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
)

// upgradeFrom7WithData: a database at version 7 holding items in every
// state (available, claimed by an owner, dead, completed) and a paused
// queue goes up to 8, which adds flow keys and rebuilds the queue's claim
// index for the items without one. Every item keeps its state; the
// available ones are claimed by the queue's claim as before; a claim held
// before the upgrade completes after it; the queue stays paused. Keyed
// items are then enqueued and claimed under a concurrency limit. Down to
// 7 removes the lanes table and the columns and keeps every item row, and
// up again.
func upgradeFrom7WithData(t *testing.T, c Config) {
	ctx := t.Context()
	d := c.Dialect
	// The rows are written by a store at the latest version, without
	// flow keys, then the schema goes down to 7: rows as version 7 holds
	// them.
	db, p, s := storeAtLatest(t, c)
	n := migrations.NamesFor(p)
	owner, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	const queue, paused = "up8", "up8-paused"
	claim := func(s *core.Store, queue string, limit int, at string) []core.Claim {
		t.Helper()
		cs, err := s.Claim(ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: limit, Lease: time.Hour})
		if err != nil {
			t.Fatalf("%s: claim of %s: %v", at, queue, err)
		}
		return cs
	}
	enqueue := func(s *core.Store, at string, specs ...core.ItemSpec) []uuid.UUID {
		t.Helper()
		enq, err := s.Enqueue(ctx, specs...)
		if err != nil {
			t.Fatalf("%s: enqueue: %v", at, err)
		}
		var ids []uuid.UUID
		for _, e := range enq {
			ids = append(ids, e.ID)
		}
		return ids
	}
	// One item at a time, so that each claim takes the one just made.
	completed := enqueue(s, "before", core.ItemSpec{Queue: queue, Kind: "k"})[0]
	if cs := claim(s, queue, 1, "before"); len(cs) != 1 || cs[0].ID != completed {
		t.Fatalf("claim of the item to complete = %v", cs)
	} else if err := s.Complete(ctx, cs[0], nil); err != nil {
		t.Fatal(err)
	}
	dead := enqueue(s, "before", core.ItemSpec{Queue: queue, Kind: "k", MaxAttempts: 1})[0]
	if cs := claim(s, queue, 1, "before"); len(cs) != 1 || cs[0].ID != dead {
		t.Fatalf("claim of the item to fail = %v", cs)
	} else if isDead, err := s.Fail(ctx, cs[0], core.FailParams{Error: "broken"}); err != nil || !isDead {
		t.Fatalf("Fail = %v, %v", isDead, err)
	}
	enqueue(s, "before", core.ItemSpec{Queue: queue, Kind: "k"})
	held := claim(s, queue, 1, "before")
	if len(held) != 1 {
		t.Fatalf("claim of the item to hold = %v", held)
	}
	available := enqueue(s, "before", core.ItemSpec{Queue: queue, Kind: "k", Priority: 1}, core.ItemSpec{Queue: queue, Kind: "k", Priority: 2})
	waiting := enqueue(s, "before", core.ItemSpec{Queue: paused, Kind: "k"})[0]
	if err := s.PauseQueue(ctx, paused); err != nil {
		t.Fatal(err)
	}
	total := 6 // items in the items table

	if rolled, err := migrations.Down(ctx, db, d, p, 7); err != nil || !slices.Equal(rolled, down(7)) {
		t.Fatalf("Down to 7 = %v, %v", rolled, err)
	}
	checkIndexes(t, c, p, "version 7", flowIndexes(7))
	if _, err := core.Open(ctx, db, d, core.Options{Prefix: p}); !errors.Is(err, core.ErrSchemaOutdated) {
		t.Fatalf("core.Open at version 7 = %v, want ErrSchemaOutdated", err)
	}
	for round := 1; round <= 2; round++ {
		at := fmt.Sprintf("round %d at version 8", round)
		if applied, err := migrations.Apply(ctx, db, d, p); err != nil || !slices.Equal(applied, up(7)) {
			t.Fatalf("round %d: Apply from version 7 = %v, %v", round, applied, err)
		}
		checkIndexes(t, c, p, "version 8", flowIndexes(8))
		s, err := core.Open(ctx, db, d, core.Options{Prefix: p})
		if err != nil {
			t.Fatalf("%s: core.Open: %v", at, err)
		}
		// Every item as it was, with no flow key.
		for id, want := range map[uuid.UUID]core.State{completed: core.StateCompleted, dead: core.StateDead, held[0].ID: core.StateClaimed, available[0]: core.StateAvailable, available[1]: core.StateAvailable} {
			it, err := s.Get(ctx, id)
			if err != nil || it.State != want || it.FlowKey != "" || it.Cost != 0 {
				t.Fatalf("%s: item %s = %+v, %v; want %s with no flow key and cost 0", at, id, it, err, want)
			}
			if want == core.StateClaimed && (it.ClaimedBy != owner || it.ClaimToken != held[0].Token) {
				t.Fatalf("%s: the held item's claim = %s by %s, want %s by %s", at, it.ClaimToken, it.ClaimedBy, held[0].Token, owner)
			}
		}
		// The claim held across the upgrade completes; the queue's claim
		// takes the available items, in their order, through the
		// rebuilt index.
		if err := s.Complete(ctx, held[0], nil); err != nil {
			t.Fatalf("%s: Complete of the claim held across the upgrade: %v", at, err)
		}
		cs := claim(s, queue, 10, at)
		if len(cs) != 2 || cs[0].ID != available[0] || cs[1].ID != available[1] {
			t.Fatalf("%s: claim = %v; want the available items %v", at, cs, available)
		}
		for _, c := range cs {
			if err := s.Complete(ctx, c, nil); err != nil {
				t.Fatalf("%s: Complete: %v", at, err)
			}
		}
		// The paused queue gives nothing until resumed.
		if cs := claim(s, paused, 10, at); len(cs) != 0 {
			t.Fatalf("%s: claim of the paused queue = %v", at, cs)
		}
		if err := s.ResumeQueue(ctx, paused); err != nil {
			t.Fatal(err)
		}
		if cs := claim(s, paused, 10, at); len(cs) != 1 || cs[0].ID != waiting {
			t.Fatalf("%s: claim of the resumed queue = %v, want %s", at, cs, waiting)
		} else if err := s.Complete(ctx, cs[0], nil); err != nil {
			t.Fatal(err)
		}

		checkKeyedClaims(t, s, owner, queue, at)
		total += 5

		// Rows for the next round: a claim held across Down and up, two
		// available items behind it, a paused queue's item.
		enqueue(s, at, core.ItemSpec{Queue: queue, Kind: "k"})
		if held = claim(s, queue, 1, at); len(held) != 1 {
			t.Fatalf("%s: claim of the item to hold = %v", at, held)
		}
		available = enqueue(s, at, core.ItemSpec{Queue: queue, Kind: "k", Priority: 1}, core.ItemSpec{Queue: queue, Kind: "k", Priority: 2})
		waiting = enqueue(s, at, core.ItemSpec{Queue: paused, Kind: "k"})[0]
		if err := s.PauseQueue(ctx, paused); err != nil {
			t.Fatal(err)
		}
		total += 4

		if rolled, err := migrations.Down(ctx, db, d, p, 7); err != nil || !slices.Equal(rolled, down(7)) {
			t.Fatalf("round %d: Down to 7 = %v, %v", round, rolled, err)
		}
		checkIndexes(t, c, p, "version 7", flowIndexes(7))
		if _, err := count(ctx, db, n.Lanes); err == nil {
			t.Errorf("round %d: %s still readable after Down to 7", round, n.Lanes)
		}
		for _, probe := range []string{"SELECT flow_key FROM " + n.Items, "SELECT cost FROM " + n.Items, "SELECT max_running FROM " + n.Queues} {
			if _, err := db.ExecContext(ctx, probe); err == nil {
				t.Errorf("round %d: %q still runs after Down to 7", round, probe)
			}
		}
		if got, err := count(ctx, db, n.Items); err != nil || got != total {
			t.Errorf("round %d: %d items after Down to 7, %v; want %d", round, got, err, total)
		}
	}
}

// checkKeyedClaims enqueues keyed items in queue (three of key a, two
// of b) under a default concurrency limit of 1 and claims them: one
// item of each key at a time, the next of a key once its claimed item is
// completed. All five end completed.
func checkKeyedClaims(t *testing.T, s *core.Store, owner uuid.UUID, queue, at string) {
	t.Helper()
	ctx := t.Context()
	if err := s.SetLimit(ctx, core.Limit{Queue: queue, Concurrency: 1}); err != nil {
		t.Fatalf("%s: SetLimit: %v", at, err)
	}
	var specs []core.ItemSpec
	for _, key := range []string{"a", "a", "a", "b", "b"} {
		specs = append(specs, core.ItemSpec{Queue: queue, Kind: "k", FlowKey: key})
	}
	if _, err := s.Enqueue(ctx, specs...); err != nil {
		t.Fatalf("%s: enqueue of keyed items: %v", at, err)
	}
	left := map[string]int{"a": 3, "b": 2}
	for step := 0; left["a"]+left["b"] > 0; step++ {
		cs, err := s.Claim(ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: 10, Lease: time.Hour})
		if err != nil {
			t.Fatalf("%s: claim of keyed items: %v", at, err)
		}
		var want []string
		for _, key := range []string{"a", "b"} {
			if left[key] > 0 {
				want = append(want, key)
			}
		}
		var got []string
		for _, c := range cs {
			got = append(got, c.FlowKey)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: claim %d of keyed items under a limit of 1 took keys %q, want %q", at, step, got, want)
		}
		// The limit holds: nothing more while each key has one claimed.
		if more, err := s.Claim(ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: 10, Lease: time.Hour}); err != nil || len(more) != 0 {
			t.Fatalf("%s: claim %d again = %v, %v; want nothing past the limit", at, step, more, err)
		}
		for _, c := range cs {
			if err := s.Complete(ctx, c, nil); err != nil {
				t.Fatalf("%s: Complete of a keyed item: %v", at, err)
			}
			left[c.FlowKey]--
		}
	}
}

// flowIndexes is which of version 8's indexes of items exist at version
// (7 or 8); items_claim exists at both, rebuilt.
func flowIndexes(version int) map[string]bool {
	return map[string]bool{"items_claim": true, "items_flow": version == 8, "items_flowing": version == 8}
}
