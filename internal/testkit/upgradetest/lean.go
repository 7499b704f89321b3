package upgradetest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
)

// upgradeFrom4WithData: a database at version 4 holding items of several
// queues, states and kinds, a run and a barrier goes up to 5, which drops
// the indexes of items by state and by kind, and the reads that used them
// (a state without a queue, a kind) find every earlier row through the
// index that stays; down to 4 keeps the rows and creates the indexes
// again, and up again.
func upgradeFrom4WithData(t *testing.T, c Config) {
	ctx := t.Context()
	d := c.Dialect
	// Version 5 adds no column: rows a store writes are rows as version 4
	// holds them.
	db, p, s := storeAtLatest(t, c)
	n := migrations.NamesFor(p)
	run, barrier, items := seedVersion3(t, s)
	kinds := map[uuid.UUID]string{}
	for i, k := range []string{"mail.send", "mail.send", "mail.bounce"} {
		enq, err := s.Enqueue(ctx, core.ItemSpec{Queue: "hooks", Kind: k})
		if err != nil {
			t.Fatal(err)
		}
		items[enq[0].ID], kinds[enq[0].ID] = "hooks/available", k
		if i == 2 {
			if err := s.Cancel(ctx, enq[0].ID); err != nil {
				t.Fatal(err)
			}
			items[enq[0].ID] = "hooks/cancelled"
		}
	}
	if rolled, err := migrations.Down(ctx, db, d, p, 4); err != nil || !slices.Equal(rolled, down(4)) {
		t.Fatalf("Down to 4 = %v, %v", rolled, err)
	}
	checkIndexes(t, c, p, "version 4", leanIndexes(true))
	if _, err := core.Open(ctx, db, d, core.Options{Prefix: p}); !errors.Is(err, core.ErrSchemaOutdated) {
		t.Fatalf("core.Open at version 4 = %v, want ErrSchemaOutdated", err)
	}
	for round := 1; round <= 2; round++ {
		if applied, err := migrations.Apply(ctx, db, d, p); err != nil || !slices.Equal(applied, up(4)) {
			t.Fatalf("round %d: Apply from version 4 = %v, %v", round, applied, err)
		}
		checkIndexes(t, c, p, "version 5", leanIndexes(false))
		s, err := core.Open(ctx, db, d, core.Options{Prefix: p})
		if err != nil {
			t.Fatalf("round %d: core.Open at version 5: %v", round, err)
		}
		if runs, err := browse.New(s).Runs(ctx, browse.RunFilter{Name: "upgrade"}); err != nil || len(runs) != 1 || runs[0].ID != run {
			t.Errorf("round %d: Runs = %+v, %v; want the run", round, runs, err)
		}
		if bs, err := browse.New(s).RunBarriers(ctx, browse.RunBarriersParams{Run: run}); err != nil || len(bs) != 1 || bs[0].ID != barrier {
			t.Errorf("round %d: RunBarriers = %+v, %v; want the barrier", round, bs, err)
		}
		for _, f := range []struct {
			filter browse.ItemFilter
			want   int
		}{
			{browse.ItemFilter{Kind: "mail.send"}, 2},
			{browse.ItemFilter{Kind: "mail.bounce"}, 1},
			{browse.ItemFilter{Kind: "mail.bounce", State: core.StateAvailable}, 0},
			{browse.ItemFilter{Kind: "mail.send", Queue: "hooks", State: core.StateAvailable}, 2},
			{browse.ItemFilter{}, len(items)},
			{browse.ItemFilter{State: core.StateAvailable}, 6},
			{browse.ItemFilter{State: core.StateCancelled}, 2},
			{browse.ItemFilter{State: core.StateClaimed}, 1},
			{browse.ItemFilter{Queue: "hooks"}, 3},
		} {
			page, err := browse.New(s).Items(ctx, f.filter)
			if err != nil || len(page.Items) != f.want || page.Next != uuid.Nil {
				t.Errorf("round %d: Items(%+v) = %d items, next %s, %v; want %d, the end", round, f.filter, len(page.Items), page.Next, err, f.want)
			}
			for _, it := range page.Items {
				if f.filter.Kind != "" && kinds[it.ID] != f.filter.Kind {
					t.Errorf("round %d: Items(%+v) lists %s of kind %q", round, f.filter, it.ID, kinds[it.ID])
				}
				if where := items[it.ID]; where == "" || f.filter.State != "" && !strings.HasSuffix(where, "/"+string(f.filter.State)) {
					t.Errorf("round %d: Items(%+v) lists %s (%q)", round, f.filter, it.ID, where)
				}
			}
		}
		if rolled, err := migrations.Down(ctx, db, d, p, 4); err != nil || !slices.Equal(rolled, down(4)) {
			t.Fatalf("round %d: Down to 4 = %v, %v", round, rolled, err)
		}
		checkIndexes(t, c, p, "version 4", leanIndexes(true))
		if got, err := count(ctx, db, n.Items); err != nil || got != len(items) {
			t.Errorf("round %d: %d items after Down to 4, %v; want %d", round, got, err, len(items))
		}
	}
}

// leanIndexes is whether version 4's items_state and items_kind, which
// version 5 drops, should exist.
func leanIndexes(exist bool) map[string]bool {
	return map[string]bool{"items_state": exist, "items_kind": exist}
}
