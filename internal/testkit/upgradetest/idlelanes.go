package upgradetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
)

// idleLanesVersion is the version that indexes idle lanes for retention.
const idleLanesVersion = 11

// upgradeToIdleLanesWithData: a database a version below idle lanes'
// index goes up and down twice, with keyed items each round: one lane
// left idle, one whose items are claimed. After each upgrade retention
// deletes the idle lane (and the last round's) and not the one whose
// items are claimed, a new item of its key opens it again, and the
// claims of the other lane's items still complete.
func upgradeToIdleLanesWithData(t *testing.T, c Config) {
	ctx := t.Context()
	d := c.Dialect
	from := idleLanesVersion - 1
	db, p, s := storeAtLatest(t, c)
	owner, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	if rolled, err := migrations.Down(ctx, db, d, p, from); err != nil || !slices.Equal(rolled, down(from)) {
		t.Fatalf("Down to %d = %v, %v", from, rolled, err)
	}
	if _, err := core.Open(ctx, db, d, core.Options{Prefix: p}); !errors.Is(err, core.ErrSchemaOutdated) {
		t.Fatalf("core.Open at version %d = %v, want ErrSchemaOutdated", from, err)
	}
	for round := 1; round <= 2; round++ {
		at := fmt.Sprintf("round %d", round)
		if applied, err := migrations.Apply(ctx, db, d, p); err != nil || !slices.Equal(applied, up(from)) {
			t.Fatalf("%s: Apply from version %d = %v, %v", at, from, applied, err)
		}
		// Each round five hours on from the last: the last round's lanes
		// are old by then.
		s, err := core.Open(ctx, db, d, core.Options{Prefix: p, ClockOffset: time.Duration(5*(round-1)) * time.Hour})
		if err != nil {
			t.Fatalf("%s: core.Open: %v", at, err)
		}
		queue := fmt.Sprintf("up-lanes-%d", round)
		if _, err := s.Enqueue(ctx, core.ItemSpec{Queue: queue, FlowKey: "idle"}, core.ItemSpec{Queue: queue, FlowKey: "busy"}, core.ItemSpec{Queue: queue, FlowKey: "busy"}); err != nil {
			t.Fatalf("%s: Enqueue: %v", at, err)
		}
		// All three claimed; idle's completed, its lane left without
		// work, which the next claim finds and sets idle; busy's held.
		cs, err := s.Claim(ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: 10, Lease: time.Hour})
		if err != nil || len(cs) != 3 {
			t.Fatalf("%s: Claim = %d, %v; want the three items", at, len(cs), err)
		}
		var held []core.Claim
		for _, c := range cs {
			if c.FlowKey != "idle" {
				held = append(held, c)
			} else if err := s.Complete(ctx, c, nil); err != nil {
				t.Fatal(err)
			}
		}
		if cs, err := s.Claim(ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: 10, Lease: time.Hour}); err != nil || len(cs) != 0 {
			t.Fatalf("%s: Claim with nothing available = %v, %v", at, cs, err)
		}

		later, err := core.Open(ctx, db, d, core.Options{Prefix: p, ClockOffset: time.Duration(5*(round-1)+3) * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		// idle's lane goes, busy's stays while its items are claimed
		// (a claim set it idle when it found no more work there); from
		// the second round on, the last round's two lanes go too: idle
		// and without work since that round's last claims.
		want := 1
		if round > 1 {
			want += 2
		}
		r, err := later.Purge(ctx, core.PurgeParams{OlderThan: time.Hour})
		if err != nil || r.Lanes != want {
			t.Fatalf("%s: Purge = %+v, %v; want %d lanes deleted: idle's, and the last round's", at, r, err, want)
		}
		if _, err := later.Enqueue(ctx, core.ItemSpec{Queue: queue, FlowKey: "idle"}); err != nil {
			t.Fatal(err)
		}
		cs, err = later.Claim(ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: 10, Lease: time.Hour})
		if err != nil || len(cs) != 1 || cs[0].FlowKey != "idle" {
			t.Fatalf("%s: after retention claimed %v, %v; want idle's new item", at, cs, err)
		}
		for _, c := range append(cs, held...) {
			if err := later.Complete(ctx, c, nil); err != nil {
				t.Fatalf("%s: Complete of %s's item: %v", at, c.FlowKey, err)
			}
		}

		if rolled, err := migrations.Down(ctx, db, d, p, from); err != nil || !slices.Equal(rolled, down(from)) {
			t.Fatalf("%s: Down to %d = %v, %v", at, from, rolled, err)
		}
	}
}
