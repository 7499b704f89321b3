package upgradetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
)

// upgradeFrom3WithData: a database at version 3 holding items in several
// queues and states, a run and a barrier of the run goes up to 4, whose
// indexes serve the dashboard's reads, and those reads find every earlier
// row; down to 3 keeps the rows, and up again.
func upgradeFrom3WithData(t *testing.T, c Config) {
	ctx := t.Context()
	d := c.Dialect
	// The rows are written by a store, then the schema goes down to 3:
	// version 4 adds no column, so they are rows as version 3 holds them.
	db, p, s := storeAtLatest(t, c)
	n := migrations.NamesFor(p)
	run, barrier, items := seedVersion3(t, s)
	if rolled, err := migrations.Down(ctx, db, d, p, 3); err != nil || !slices.Equal(rolled, down(3)) {
		t.Fatalf("Down to 3 = %v, %v", rolled, err)
	}
	if _, err := core.Open(ctx, db, d, core.Options{Prefix: p}); !errors.Is(err, core.ErrSchemaOutdated) {
		t.Fatalf("core.Open at version 3 = %v, want ErrSchemaOutdated", err)
	}
	for round := 1; round <= 2; round++ {
		if applied, err := migrations.Apply(ctx, db, d, p); err != nil || !slices.Equal(applied, up(3)) {
			t.Fatalf("round %d: Apply from version 3 = %v, %v", round, applied, err)
		}
		s, err := core.Open(ctx, db, d, core.Options{Prefix: p})
		if err != nil {
			t.Fatalf("round %d: core.Open at the latest version: %v", round, err)
		}
		checkDashboardReads(t, s, round, run, barrier, items)
		if rolled, err := migrations.Down(ctx, db, d, p, 3); err != nil || !slices.Equal(rolled, down(3)) {
			t.Fatalf("round %d: Down to 3 = %v, %v", round, rolled, err)
		}
		if got, err := count(ctx, db, n.Items); err != nil || got != len(items) {
			t.Errorf("round %d: %d items after Down to 3, %v; want %d", round, got, err, len(items))
		}
		for _, table := range []string{n.Runs, n.Barriers} {
			if got, err := count(ctx, db, table); err != nil || got != 1 {
				t.Errorf("round %d: %d rows of %s after Down to 3, %v; want 1", round, got, table, err)
			}
		}
	}
}

// seedVersion3 writes a run whose first item opened a barrier, and items
// of two queues: one cancelled, the others available. It returns the run,
// the barrier and every item's id by queue and state.
func seedVersion3(t *testing.T, s *core.Store) (uuid.UUID, uuid.UUID, map[uuid.UUID]string) {
	ctx := t.Context()
	items := map[uuid.UUID]string{}
	rc, first, err := s.CreateRun(ctx, core.RunSpec{Name: "upgrade"}, core.ItemSpec{Queue: "steps"})
	if err != nil {
		t.Fatal(err)
	}
	owner, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := s.Claim(ctx, core.ClaimParams{Queue: "steps", Owner: owner, Limit: 1, Lease: time.Minute})
	if err != nil || len(cs) != 1 {
		t.Fatalf("claim the run's first item = %v, %v", cs, err)
	}
	var barrier uuid.UUID
	if _, err := s.Fence(ctx, cs[0], func(ctx context.Context, f *core.Fenced) error {
		b, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: "fan", Join: core.JoinSpec{Queue: "steps"}})
		barrier = b.ID
		return err
	}); err != nil {
		t.Fatal(err)
	}
	items[first[0].ID] = "steps/claimed"
	var specs []core.ItemSpec
	for range 5 {
		specs = append(specs, core.ItemSpec{Queue: "mail"})
	}
	enq, err := s.Enqueue(ctx, specs...)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range enq {
		items[e.ID] = "mail/available"
		if i == 0 {
			if err := s.Cancel(ctx, e.ID); err != nil {
				t.Fatal(err)
			}
			items[e.ID] = "mail/cancelled"
		}
	}
	return rc.ID, barrier, items
}

// checkDashboardReads reads the seeded rows back through every read of
// version 4's indexes.
func checkDashboardReads(t *testing.T, s *core.Store, round int, run, barrier uuid.UUID, items map[uuid.UUID]string) {
	t.Helper()
	ctx := t.Context()
	for _, f := range []struct {
		filter browse.ItemFilter
		want   []string // queue/state of each item the filter matches
	}{
		{browse.ItemFilter{}, []string{"steps/claimed", "mail/available", "mail/cancelled"}},
		{browse.ItemFilter{Queue: "mail"}, []string{"mail/available", "mail/cancelled"}},
		{browse.ItemFilter{Queue: "mail", State: core.StateAvailable}, []string{"mail/available"}},
		{browse.ItemFilter{State: core.StateCancelled}, []string{"mail/cancelled"}},
		{browse.ItemFilter{Run: run}, []string{"steps/claimed"}},
	} {
		page, err := browse.New(s).Items(ctx, f.filter)
		got := page.Items
		if err != nil {
			t.Fatalf("round %d: Items(%+v): %v", round, f.filter, err)
		}
		want := 0
		for _, where := range items {
			if slices.Contains(f.want, where) {
				want++
			}
		}
		if len(got) != want {
			t.Errorf("round %d: Items(%+v) = %d items, want %d", round, f.filter, len(got), want)
		}
		for _, it := range got {
			if !slices.Contains(f.want, items[it.ID]) {
				t.Errorf("round %d: Items(%+v) lists %s (%s)", round, f.filter, it.ID, items[it.ID])
			}
		}
	}
	if runs, err := browse.New(s).Runs(ctx, browse.RunFilter{Name: "upgrade", State: core.RunRunning}); err != nil || len(runs) != 1 || runs[0].ID != run {
		t.Errorf("round %d: Runs = %+v, %v; want the run", round, runs, err)
	}
	if bs, err := browse.New(s).RunBarriers(ctx, browse.RunBarriersParams{Run: run}); err != nil || len(bs) != 1 || bs[0].ID != barrier {
		t.Errorf("round %d: RunBarriers = %+v, %v; want the barrier", round, bs, err)
	}
	sums, err := browse.New(s).QueueSummaries(ctx, browse.QueueSummaryParams{})
	if err != nil || len(sums) != 2 || sums[0].Queue != "mail" || sums[0].Counts[core.StateAvailable] != 4 ||
		sums[0].Counts[core.StateCancelled] != 1 || sums[1].Queue != "steps" || sums[1].Counts[core.StateClaimed] != 1 {
		t.Errorf("round %d: QueueSummaries = %+v, %v", round, sums, err)
	}
}
