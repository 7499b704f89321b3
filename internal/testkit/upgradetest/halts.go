package upgradetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
)

// upgradeFrom6WithData: a database at version 6 holding a halted run (its
// item dead) and a running one goes up to 7, whose runs name the item
// that halted them. The halt stored before keeps its reason, detail and
// id and names no item; the run revives, and its next halt names its
// item. Down to 6 keeps every row, and up again.
func upgradeFrom6WithData(t *testing.T, c Config) {
	ctx := t.Context()
	d := c.Dialect
	// The rows are written by a store, then the schema goes down to 6,
	// which drops the one column version 7 adds.
	db, p, s := storeAtLatest(t, c)
	n := migrations.NamesFor(p)
	owner, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	// fail claims the run's one item and fails it on its last attempt,
	// which halts the run.
	fail := func(s *core.Store, at string) uuid.UUID {
		t.Helper()
		cs, err := s.Claim(ctx, core.ClaimParams{Queue: "up7", Owner: owner, Limit: 1, Lease: time.Minute})
		if err != nil || len(cs) != 1 {
			t.Fatalf("%s: claim = %v, %v", at, cs, err)
		}
		if dead, err := s.Fail(ctx, cs[0], core.FailParams{Error: "broken"}); err != nil || !dead {
			t.Fatalf("%s: Fail = %v, %v", at, dead, err)
		}
		return cs[0].ID
	}
	halted, _, err := s.CreateRun(ctx, core.RunSpec{Name: "up7"}, core.ItemSpec{Queue: "up7", MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	fail(s, "at the latest version")
	if _, _, err := s.CreateRun(ctx, core.RunSpec{Name: "up7"}, core.ItemSpec{Queue: "up7-other"}); err != nil {
		t.Fatal(err)
	}
	before, err := s.GetRun(ctx, halted.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rolled, err := migrations.Down(ctx, db, d, p, 6); err != nil || !slices.Equal(rolled, down(6)) {
		t.Fatalf("Down to 6 = %v, %v", rolled, err)
	}
	if _, err := core.Open(ctx, db, d, core.Options{Prefix: p}); !errors.Is(err, core.ErrSchemaOutdated) {
		t.Fatalf("core.Open at version 6 = %v, want ErrSchemaOutdated", err)
	}
	for round := 1; round <= 2; round++ {
		if applied, err := migrations.Apply(ctx, db, d, p); err != nil || !slices.Equal(applied, up(6)) {
			t.Fatalf("round %d: Apply from version 6 = %v, %v", round, applied, err)
		}
		s, err := core.Open(ctx, db, d, core.Options{Prefix: p})
		if err != nil {
			t.Fatalf("round %d: core.Open at version 7: %v", round, err)
		}
		r, err := s.GetRun(ctx, halted.ID)
		if err != nil || r.State != core.RunHalted || r.HaltReason != before.HaltReason || r.HaltDetail != before.HaltDetail || r.HaltID != before.HaltID || r.HaltItemID != uuid.Nil {
			t.Fatalf("round %d: the run halted at version 6 = %+v, %v; want its halt %s (%q, %q) naming no item", round, r, err, before.HaltID, before.HaltReason, before.HaltDetail)
		}
		if rev, err := s.ReviveRun(ctx, halted.ID); err != nil || rev.Items != 1 {
			t.Fatalf("round %d: ReviveRun = %+v, %v; want its dead item revived", round, rev, err)
		}
		item := fail(s, "at version 7")
		if before, err = s.GetRun(ctx, halted.ID); err != nil || before.State != core.RunHalted || before.HaltItemID != item || before.HaltDetail != "broken" {
			t.Fatalf("round %d: the run halted at version 7 = %+v, %v; want its halt naming %s", round, before, err, item)
		}
		if rolled, err := migrations.Down(ctx, db, d, p, 6); err != nil || !slices.Equal(rolled, down(6)) {
			t.Fatalf("round %d: Down to 6 = %v, %v", round, rolled, err)
		}
		if got, err := count(ctx, db, n.Runs); err != nil || got != 2 {
			t.Errorf("round %d: %d runs after Down to 6, %v; want 2", round, got, err)
		}
		if got, err := count(ctx, db, n.Items); err != nil || got != 2 {
			t.Errorf("round %d: %d items after Down to 6, %v; want 2", round, got, err)
		}
	}
}
