package upgradetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
)

// runVersionVersion is the version that records runs' versions.
const runVersionVersion = 14

// upgradeToRunVersionWithData: a database one version below the one that
// records a run's version, holding a run written with a version and one
// without, goes up: both read back with none (Down dropped the column),
// keep their name, key, state and input, and a run created then keeps its
// version; Down keeps every run, and up again.
func upgradeToRunVersionWithData(t *testing.T, c Config) {
	ctx := t.Context()
	d := c.Dialect
	db, p, s := storeAtLatest(t, c)
	n := migrations.NamesFor(p)
	versioned, _, err := s.CreateRun(ctx, core.RunSpec{Name: "up14", Key: "versioned", Input: []byte(`{"n":1}`), Version: 3}, core.ItemSpec{Queue: "up14"})
	if err != nil {
		t.Fatal(err)
	}
	plain, _, err := s.CreateRun(ctx, core.RunSpec{Name: "up14", Key: "plain"}, core.ItemSpec{Queue: "up14"})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := s.GetRun(ctx, versioned.ID); err != nil || r.Version != 3 {
		t.Fatalf("the run created with version 3 = %+v, %v", r, err)
	}
	below := runVersionVersion - 1
	if rolled, err := migrations.Down(ctx, db, d, p, below); err != nil || !slices.Equal(rolled, down(below)) {
		t.Fatalf("Down to %d = %v, %v", below, rolled, err)
	}
	if _, err := core.Open(ctx, db, d, core.Options{Prefix: p}); !errors.Is(err, core.ErrSchemaOutdated) {
		t.Fatalf("core.Open at version %d = %v, want ErrSchemaOutdated", below, err)
	}
	runs := 2
	for round := 1; round <= 2; round++ {
		at := fmt.Sprintf("round %d at version %d", round, runVersionVersion)
		if applied, err := migrations.Apply(ctx, db, d, p); err != nil || !slices.Equal(applied, up(below)) {
			t.Fatalf("%s: Apply from version %d = %v, %v", at, below, applied, err)
		}
		s, err := core.Open(ctx, db, d, core.Options{Prefix: p})
		if err != nil {
			t.Fatalf("%s: core.Open: %v", at, err)
		}
		for id, key := range map[uuid.UUID]string{versioned.ID: "versioned", plain.ID: "plain"} {
			r, err := s.GetRun(ctx, id)
			if err != nil || r.Version != 0 || r.Name != "up14" || r.Key != key || r.State != core.RunRunning {
				t.Fatalf("%s: the run %s made before = %+v, %v; want it kept, with no version", at, key, r, err)
			}
		}
		made, _, err := s.CreateRun(ctx, core.RunSpec{Name: "up14", Key: fmt.Sprintf("round-%d", round), Version: round + 4})
		if err != nil {
			t.Fatalf("%s: CreateRun: %v", at, err)
		}
		runs++
		if r, err := s.GetRun(ctx, made.ID); err != nil || r.Version != round+4 {
			t.Fatalf("%s: the run created with version %d = %+v, %v", at, round+4, r, err)
		}
		if rolled, err := migrations.Down(ctx, db, d, p, below); err != nil || !slices.Equal(rolled, down(below)) {
			t.Fatalf("%s: Down to %d = %v, %v", at, below, rolled, err)
		}
		if got, err := count(ctx, db, n.Runs); err != nil || got != runs {
			t.Errorf("%s: %d runs after Down to %d, %v; want %d", at, got, below, err, runs)
		}
	}
}
