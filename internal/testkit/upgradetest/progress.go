package upgradetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
)

// progressVersion is the version that keeps items' progress.
const progressVersion = 13

// upgradeToProgressWithData: a database one version below the one that
// keeps items' progress, holding a claimed item and a finished one, goes
// up: the items have no progress, the claimed one reports some, which
// reads back; Down drops the progress and keeps the items, and up again.
func upgradeToProgressWithData(t *testing.T, c Config) {
	ctx := t.Context()
	d := c.Dialect
	db, p, s := storeAtLatest(t, c)
	n := migrations.NamesFor(p)
	res, err := s.Enqueue(ctx, core.ItemSpec{Queue: "up13"}, core.ItemSpec{Queue: "up13"})
	if err != nil {
		t.Fatal(err)
	}
	owner, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := s.Claim(ctx, core.ClaimParams{Queue: "up13", Owner: owner, Limit: 2, Lease: time.Hour})
	if err != nil || len(cs) != 2 {
		t.Fatalf("Claim = %v, %v", cs, err)
	}
	if err := s.Complete(ctx, cs[1], nil); err != nil {
		t.Fatal(err)
	}
	below := progressVersion - 1
	if rolled, err := migrations.Down(ctx, db, d, p, below); err != nil || !slices.Equal(rolled, down(below)) {
		t.Fatalf("Down to %d = %v, %v", below, rolled, err)
	}
	if _, err := core.Open(ctx, db, d, core.Options{Prefix: p}); !errors.Is(err, core.ErrSchemaOutdated) {
		t.Fatalf("core.Open at version %d = %v, want ErrSchemaOutdated", below, err)
	}
	for round := 1; round <= 2; round++ {
		at := fmt.Sprintf("round %d at version %d", round, progressVersion)
		if applied, err := migrations.Apply(ctx, db, d, p); err != nil || !slices.Equal(applied, up(below)) {
			t.Fatalf("%s: Apply from version %d = %v, %v", at, below, applied, err)
		}
		for _, r := range res {
			if got, ok, err := s.Progress(ctx, r.ID); err != nil || ok {
				t.Fatalf("%s: Progress of an item made before = %+v, %v, %v; want none", at, got, ok, err)
			}
		}
		out := json.RawMessage(fmt.Sprintf(`{"round":%d}`, round))
		if held, err := s.SetProgress(ctx, cs[0], core.Progress{Done: int64(round), Total: 2, Output: out}); err != nil || !held {
			t.Fatalf("%s: SetProgress = %v, %v", at, held, err)
		}
		if got, ok, err := s.Progress(ctx, cs[0].ID); err != nil || !ok || got.Done != int64(round) || got.Total != 2 {
			t.Fatalf("%s: Progress = %+v, %v, %v", at, got, ok, err)
		}
		if rolled, err := migrations.Down(ctx, db, d, p, below); err != nil || !slices.Equal(rolled, down(below)) {
			t.Fatalf("round %d: Down to %d = %v, %v", round, below, rolled, err)
		}
		if _, err := count(ctx, db, n.Progress); err == nil {
			t.Errorf("round %d: %s still readable after Down to %d", round, n.Progress, below)
		}
		if got, err := count(ctx, db, n.Items); err != nil || got != 2 {
			t.Errorf("round %d: %d items after Down to %d, %v; want 2", round, got, below, err)
		}
	}
}
