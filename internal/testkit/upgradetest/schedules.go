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

// upgradeFrom8WithData: a database at version 8 holding a code-declared
// schedule's watermark and an item goes up to 9, which keeps schedules in
// the database. The code's schedule goes on from its watermark (its ticks
// since, none again), is not listed among the stored ones, and its name
// is refused to SetSchedule; a stored schedule is set, ticks, and is
// listed. Down to 8 deletes the stored schedule's row and keeps the
// code's watermark and every item, and up again.
func upgradeFrom8WithData(t *testing.T, c Config) {
	ctx := t.Context()
	d := c.Dialect
	db, p, s := storeAtLatest(t, c)
	n := migrations.NamesFor(p)
	code := core.ScheduleSpec{Name: "code", Every: time.Hour, MaxCatchUp: 100, Item: core.ItemSpec{Queue: "up9"}}
	if _, err := s.EnqueueDue(ctx, code); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enqueue(ctx, core.ItemSpec{Queue: "up9", Kind: "plain"}); err != nil {
		t.Fatal(err)
	}
	total := 1
	if rolled, err := migrations.Down(ctx, db, d, p, 8); err != nil || !slices.Equal(rolled, down(8)) {
		t.Fatalf("Down to 8 = %v, %v", rolled, err)
	}
	if _, err := core.Open(ctx, db, d, core.Options{Prefix: p}); !errors.Is(err, core.ErrSchemaOutdated) {
		t.Fatalf("core.Open at version 8 = %v, want ErrSchemaOutdated", err)
	}
	for round := 1; round <= 2; round++ {
		at := fmt.Sprintf("round %d at version 9", round)
		if applied, err := migrations.Apply(ctx, db, d, p); err != nil || !slices.Equal(applied, up(8)) {
			t.Fatalf("%s: Apply from version 8 = %v, %v", at, applied, err)
		}
		// Three hours later each round: the code's schedule finds the
		// three ticks since its watermark, kept across the upgrade.
		later, err := core.Open(ctx, db, d, core.Options{Prefix: p, ClockOffset: time.Duration(3*round) * time.Hour})
		if err != nil {
			t.Fatalf("%s: core.Open: %v", at, err)
		}
		if ticks, err := later.EnqueueDue(ctx, code); err != nil || len(ticks) != 3 {
			t.Fatalf("%s: EnqueueDue of the code's schedule = %d ticks, %v; want 3", at, len(ticks), err)
		}
		total += 3
		if all, err := later.Schedules(ctx); err != nil || len(all) != 0 {
			t.Fatalf("%s: Schedules = %v, %v; want none (the code's is not stored)", at, all, err)
		}
		var ie *core.InputError
		if _, err := later.SetSchedule(ctx, core.ScheduleSpec{Name: "code", Every: time.Hour, Item: core.ItemSpec{Queue: "up9"}}); !errors.As(err, &ie) {
			t.Fatalf("%s: SetSchedule of the code schedule's name = %v", at, err)
		}
		stored := core.ScheduleSpec{Name: "stored", Cron: "0 * * * *", TimeZone: "Asia/Kolkata", Item: core.ItemSpec{Queue: "up9"}}
		if created, err := later.SetSchedule(ctx, stored); err != nil || !created {
			t.Fatalf("%s: SetSchedule = %v, %v; want created (Down deleted the last round's)", at, created, err)
		}
		ahead, err := core.Open(ctx, db, d, core.Options{Prefix: p, ClockOffset: time.Duration(3*round+2) * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if ticks, err := ahead.EnqueueStoredDue(ctx); err != nil || len(ticks) != 1 {
			t.Fatalf("%s: EnqueueStoredDue = %v, %v; want the latest of two hours' ticks", at, ticks, err)
		}
		total++
		if all, err := ahead.Schedules(ctx); err != nil || len(all) != 1 || all[0].Name != "stored" || all[0].TimeZone != "Asia/Kolkata" {
			t.Fatalf("%s: Schedules = %+v, %v", at, all, err)
		}

		if rolled, err := migrations.Down(ctx, db, d, p, 8); err != nil || !slices.Equal(rolled, down(8)) {
			t.Fatalf("round %d: Down to 8 = %v, %v", round, rolled, err)
		}
		if _, err := db.ExecContext(ctx, "SELECT revision FROM "+n.Schedules); err == nil {
			t.Errorf("round %d: revision still readable after Down to 8", round)
		}
		if got, err := count(ctx, db, n.Schedules); err != nil || got != 1 {
			t.Errorf("round %d: %d schedule rows after Down to 8, %v; want the code's watermark only", round, got, err)
		}
		if got, err := count(ctx, db, n.Items); err != nil || got != total {
			t.Errorf("round %d: %d items after Down to 8, %v; want %d", round, got, err, total)
		}
	}
}
