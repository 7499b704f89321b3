package upgradetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
)

// upgradeFrom9WithData: a database at version 9 holding a run and its
// items goes up to 10, which keeps runs' contexts. The run's context is
// empty, an item of the run writes it through its fence, and it reads
// back; Down to 9 drops the contexts and keeps the run and its items, and
// up again.
func upgradeFrom9WithData(t *testing.T, c Config) {
	ctx := t.Context()
	d := c.Dialect
	db, p, s := storeAtLatest(t, c)
	n := migrations.NamesFor(p)
	run, _, err := s.CreateRun(ctx, core.RunSpec{Name: "up10"}, core.ItemSpec{Queue: "up10"}, core.ItemSpec{Queue: "up10"})
	if err != nil {
		t.Fatal(err)
	}
	owner, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	if rolled, err := migrations.Down(ctx, db, d, p, 9); err != nil || !slices.Equal(rolled, down(9)) {
		t.Fatalf("Down to 9 = %v, %v", rolled, err)
	}
	if _, err := core.Open(ctx, db, d, core.Options{Prefix: p}); !errors.Is(err, core.ErrSchemaOutdated) {
		t.Fatalf("core.Open at version 9 = %v, want ErrSchemaOutdated", err)
	}
	for round := 1; round <= 2; round++ {
		at := fmt.Sprintf("round %d at version 10", round)
		if applied, err := migrations.Apply(ctx, db, d, p); err != nil || !slices.Equal(applied, up(9)) {
			t.Fatalf("%s: Apply from version 9 = %v, %v", at, applied, err)
		}
		if got, err := s.RunContext(ctx, run.ID); err != nil || len(got) != 0 {
			t.Fatalf("%s: RunContext of a run made before = %+v, %v; want empty", at, got, err)
		}
		if _, err := s.GetRun(ctx, run.ID); err != nil {
			t.Fatalf("%s: GetRun: %v", at, err)
		}
		cs, err := s.Claim(ctx, core.ClaimParams{Queue: "up10", Owner: owner, Limit: 1, Lease: time.Minute})
		if err != nil || len(cs) != 1 {
			t.Fatalf("%s: Claim = %v, %v", at, cs, err)
		}
		held, err := s.Fence(ctx, cs[0], func(ctx context.Context, f *core.Fenced) error {
			if err := f.Complete(ctx, nil); err != nil {
				return err
			}
			return f.SetRunContext(ctx, "round", json.RawMessage(fmt.Sprint(round)))
		})
		if err != nil || !held {
			t.Fatalf("%s: fence writing the context = %v, %v", at, held, err)
		}
		if got, err := s.RunContext(ctx, run.ID); err != nil || len(got) != 1 || string(got[0].Value) != fmt.Sprint(round) || got[0].WrittenBy != cs[0].ID {
			t.Fatalf("%s: RunContext = %+v, %v", at, got, err)
		}
		if rolled, err := migrations.Down(ctx, db, d, p, 9); err != nil || !slices.Equal(rolled, down(9)) {
			t.Fatalf("round %d: Down to 9 = %v, %v", round, rolled, err)
		}
		if _, err := count(ctx, db, n.RunContext); err == nil {
			t.Errorf("round %d: %s still readable after Down to 9", round, n.RunContext)
		}
		if got, err := count(ctx, db, n.Runs); err != nil || got != 1 {
			t.Errorf("round %d: %d runs after Down to 9, %v; want 1", round, got, err)
		}
		if got, err := count(ctx, db, n.Items); err != nil || got != 2 {
			t.Errorf("round %d: %d items after Down to 9, %v; want 2", round, got, err)
		}
	}
}
