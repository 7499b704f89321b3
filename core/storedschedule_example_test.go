package core_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/sqlite"
)

// Schedules kept in the database: an operator sets one, in Paris time;
// every process running EnqueueStoredDue (a worker with StoredSchedules)
// enqueues its ticks, here a day later (a store whose clock runs ahead).
// Paused, it enqueues nothing; a backfill enqueues the ticks passed over.
func ExampleStore_SetSchedule() {
	dir, _ := os.MkdirTemp("", "plenum-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, err := sqlite.Open(filepath.Join(dir, "jobs.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	store, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		log.Fatal(err)
	}
	_, err = store.SetSchedule(ctx, core.ScheduleSpec{
		Name: "report", Cron: "30 2 * * *", TimeZone: "Europe/Paris",
		Item: core.ItemSpec{Queue: "batch", Kind: "report"},
	})
	if err != nil {
		log.Fatal(err)
	}

	tomorrow, _ := core.Open(ctx, db, sqlite.Dialect(), core.Options{ClockOffset: 24 * time.Hour})
	ticks, _ := tomorrow.EnqueueStoredDue(ctx)
	paris, _ := time.LoadLocation("Europe/Paris")
	first := ticks[0].At
	fmt.Println("a day later:", len(ticks), "tick, at", first.In(paris).Format("15:04"), "in Paris")

	_ = tomorrow.PauseSchedule(ctx, "report")
	later, _ := core.Open(ctx, db, sqlite.Dialect(), core.Options{ClockOffset: 72 * time.Hour})
	ticks, _ = later.EnqueueStoredDue(ctx)
	fmt.Println("paused:", len(ticks), "ticks")
	_ = later.ResumeSchedule(ctx, "report")

	bf, _ := later.BackfillSchedule(ctx, "report", first, time.Now().Add(72*time.Hour))
	fmt.Println("backfilled:", len(bf.Enqueued), "ticks,", bf.Existed, "already enqueued")
	// Output:
	// a day later: 1 tick, at 02:30 in Paris
	// paused: 0 ticks
	// backfilled: 2 ticks, 1 already enqueued
}
