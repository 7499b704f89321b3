package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// A handler reports its progress and partial output as it goes; the
// worker writes the latest report at most once per ProgressInterval, and
// the last one before the item's outcome. Readers of the store see it.
func ExampleJob_SetProgress() {
	dir, _ := os.MkdirTemp("", "plenum-progress-example")
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
	w, err := worker.New(store, worker.Config{
		Queues:       map[string]worker.QueueConfig{"import": {MaxWorkers: 1}},
		PollInterval: 10 * time.Millisecond,
	})
	if err != nil {
		log.Fatal(err)
	}
	w.HandleFunc("import.rows", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		const rows = 100_000
		for i := int64(1); i <= rows; i++ {
			// ... import row i ...
			out := json.RawMessage(fmt.Sprintf(`{"last_row":%d}`, i))
			if err := job.SetProgress(core.Progress{Done: i, Total: rows, Output: out}); err != nil {
				return err
			}
		}
		return nil
	})
	res, err := store.Enqueue(ctx, core.ItemSpec{Queue: "import", Kind: "import.rows"})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		log.Fatal(err)
	}
	for {
		it, err := store.Get(ctx, res[0].ID)
		if err != nil {
			log.Fatal(err)
		}
		if it.State == core.StateCompleted {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := w.Stop(stop); err != nil {
		log.Fatal(err)
	}
	p, _, err := store.Progress(ctx, res[0].ID)
	if err != nil {
		log.Fatal(err)
	}
	f, _ := p.Fraction()
	fmt.Printf("%d of %d (%.0f%%), output %s\n", p.Done, p.Total, 100*f, p.Output)
	// Output:
	// 100000 of 100000 (100%), output {"last_row":100000}
}
