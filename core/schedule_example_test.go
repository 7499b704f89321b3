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

// Periodic work: the first call records where each schedule stands; after
// three days' downtime (here a store whose clock runs three days ahead)
// one call enqueues the hourly schedule's latest tick only (the default),
// and the nightly one's three missed ticks (MaxCatchUp: 3).
func ExampleStore_EnqueueDue() {
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
	schedules := []core.ScheduleSpec{
		{Name: "hourly", Every: time.Hour, Item: core.ItemSpec{Queue: "batch", Kind: "sweep"}},
		{Name: "nightly", Cron: "30 2 * * *", MaxCatchUp: 3, Item: core.ItemSpec{Queue: "batch", Kind: "report"}},
	}
	ticks, _ := store.EnqueueDue(ctx, schedules...)
	fmt.Println("first call:", len(ticks), "ticks")

	later, _ := core.Open(ctx, db, sqlite.Dialect(), core.Options{ClockOffset: 72 * time.Hour})
	ticks, err = later.EnqueueDue(ctx, schedules...)
	if err != nil {
		log.Fatal(err)
	}
	for _, tk := range ticks {
		item, _ := store.Get(ctx, tk.ID)
		name, _, _ := core.ParseTickKey(item.Key)
		fmt.Println(name, item.Kind)
	}
	// Output:
	// first call: 0 ticks
	// hourly sweep
	// nightly report
	// nightly report
	// nightly report
}
