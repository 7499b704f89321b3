package worker_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// ReportArgs are the args of a report for one tenant.
type ReportArgs struct {
	Tenant string `json:"tenant"`
	Month  int    `json:"month"`
}

// Report's items are keyed by tenant: each tenant's reports form a lane
// of the queue, under the tenant's limits.
var Report = worker.NewKind("report.build", worker.KindOptions[ReportArgs]{
	FlowKey: func(a ReportArgs) string { return a.Tenant },
})

// Flow keys: at most two reports of one tenant run at once, in every
// process, however many slots the workers have; other tenants' reports
// take turns with them.
func ExampleKindOptions() {
	dir, _ := os.MkdirTemp("", "plenum-flow-example")
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
	// Limits live in the database: set them once, change them live.
	if err := store.SetLimit(ctx, core.Limit{Queue: "reports", Key: "acme", Concurrency: 2}); err != nil {
		log.Fatal(err)
	}
	var reports []ReportArgs
	for m := 1; m <= 6; m++ {
		reports = append(reports, ReportArgs{Tenant: "acme", Month: m})
	}
	if _, err := Report.EnqueueMany(ctx, store, reports, worker.EnqueueParams{Queue: "reports"}); err != nil {
		log.Fatal(err)
	}

	w, err := worker.New(store, worker.Config{
		Queues:       map[string]worker.QueueConfig{"reports": {MaxWorkers: 8}},
		PollInterval: 10 * time.Millisecond,
	})
	if err != nil {
		log.Fatal(err)
	}
	var running, most atomic.Int64
	done := make(chan struct{}, len(reports))
	Report.Handle(w, func(ctx context.Context, job *worker.Job[ReportArgs]) error {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		time.Sleep(20 * time.Millisecond) // build the report
		done <- struct{}{}
		return nil
	})
	if err := w.Start(ctx); err != nil {
		log.Fatal(err)
	}
	for range reports {
		<-done
	}
	stop, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := w.Stop(stop); err != nil {
		log.Fatal(err)
	}
	fmt.Println("reports built:", len(reports))
	fmt.Println("most at once:", most.Load() <= 2)
	// Output:
	// reports built: 6
	// most at once: true
}
