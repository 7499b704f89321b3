package upgradetest

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
)

// upgradeFrom2WithData: a database at version 2 with data in every table
// of versions 1 and 2 goes up to 3, where the earlier rows read as
// belonging to no run and a run works; down to 2 keeps them, and up again.
func upgradeFrom2WithData(t *testing.T, c Config) {
	ctx := t.Context()
	d := c.Dialect
	db := c.Open(t)
	p := Prefix(t, db, d)
	n := migrations.NamesFor(p)
	if _, err := migrations.Up(ctx, db, d, p, 1); err != nil {
		t.Fatal(err)
	}
	seed(t, db, d, p)
	if _, err := migrations.Up(ctx, db, d, p, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, d.Rebind("INSERT INTO "+n.Queues+" (name, paused, updated_at) VALUES (?, ?, "+d.Now(0)+")"), "q", d.Bool(false)); err != nil {
		t.Fatalf("write a queue: %v", err)
	}
	if _, err := core.Open(ctx, db, d, core.Options{Prefix: p}); !errors.Is(err, core.ErrSchemaOutdated) {
		t.Fatalf("core.Open at version 2 = %v, want ErrSchemaOutdated", err)
	}
	for round := 1; round <= 2; round++ {
		if applied, err := migrations.Apply(ctx, db, d, p); err != nil || !slices.Equal(applied, up(2)) {
			t.Fatalf("round %d: Apply from version 2 = %v, %v", round, applied, err)
		}
		s, err := core.Open(ctx, db, d, core.Options{Prefix: p})
		if err != nil {
			t.Fatalf("round %d: core.Open at version 3: %v", round, err)
		}
		for _, f := range fixtures {
			it, err := s.Get(ctx, f.id)
			if err != nil || it.Run != uuid.Nil || it.WaitName != "" || it.Waiting() || string(it.State) != f.state {
				t.Fatalf("round %d: item of version 2 at version 3 = %+v, %v; want no run, not waiting, %s", round, it, err, f.state)
			}
		}
		checkBackfill(t, db, d, p)
		rc, enq, err := s.CreateRun(ctx, core.RunSpec{Name: "upgrade", Key: "k"}, core.ItemSpec{Queue: "q"})
		if err != nil || rc.Existed || len(enq) != 1 {
			t.Fatalf("round %d: CreateRun = %+v, %v, %v", round, rc, enq, err)
		}
		if it, err := s.Get(ctx, enq[0].ID); err != nil || it.Run != rc.ID {
			t.Fatalf("round %d: the run's first item = %+v, %v; want run %s", round, it, err, rc.ID)
		}
		if rolled, err := migrations.Down(ctx, db, d, p, 2); err != nil || !slices.Equal(rolled, down(2)) {
			t.Fatalf("round %d: Down to 2 = %v, %v", round, rolled, err)
		}
		for _, table := range []string{n.Runs, n.Signals} {
			if _, err := count(ctx, db, table); err == nil {
				t.Errorf("round %d: %s still readable after Down to 2", round, table)
			}
		}
		if _, err := db.ExecContext(ctx, "SELECT run_id FROM "+n.Items); err == nil {
			t.Errorf("round %d: items.run_id still there after Down to 2", round)
		}
		if got, err := count(ctx, db, n.Items); err != nil || got != len(fixtures)+round {
			t.Errorf("round %d: %d items after Down, %v; want %d", round, got, err, len(fixtures)+round)
		}
		if got, err := count(ctx, db, n.Queues); err != nil || got != 1 {
			t.Errorf("round %d: %d queues after Down, %v; want 1", round, got, err)
		}
		checkBackfill(t, db, d, p)
	}
}
