package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// The import step reports its progress and the rows it has read; its
// first attempt fails half-way, and its retry resumes from the partial
// output the failure left. The next step reads the import's last report.
func ExampleSetProgress() {
	dir, _ := os.MkdirTemp("", "plenum-pipeline-progress")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, _ := sqlite.Open(filepath.Join(dir, "app.db"))
	defer db.Close()
	store, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	w, _ := worker.New(store, worker.Config{Queues: map[string]worker.QueueConfig{"pipelines": {MaxWorkers: 4}}, PollInterval: 20 * time.Millisecond})
	eng, _ := pipeline.New(store, w, pipeline.EngineOptions{Queue: "pipelines"})

	type read struct {
		Rows int `json:"rows"`
	}
	importRows := pipeline.Step("import", func(ctx context.Context, total int) (int, error) {
		from := 0
		if p, ok, err := pipeline.StepProgress(ctx); err != nil {
			return 0, err
		} else if ok {
			var r read
			_ = json.Unmarshal(p.Output, &r)
			from = r.Rows
			fmt.Println("resuming after row", from)
		}
		for row := from + 1; row <= total; row++ {
			out, _ := json.Marshal(read{Rows: row})
			if err := pipeline.SetProgress(ctx, core.Progress{Done: int64(row), Total: int64(total), Output: out}); err != nil {
				return 0, err
			}
			if info, _ := pipeline.StepInfo(ctx); info.Attempt == 1 && row == total/2 {
				return 0, errors.New("connection reset")
			}
		}
		return total, nil
	})
	report := pipeline.Step("report", func(ctx context.Context, rows int) (string, error) {
		p, _, err := pipeline.PreviousProgress(ctx)
		f, _ := p.Fraction()
		return fmt.Sprintf("%d rows, import %.0f%% done, output %s", rows, 100*f, p.Output), err
	})
	p, err := pipeline.Define("import", pipeline.Then(importRows, report), pipeline.Options{Backoff: pipeline.Backoff{Initial: 10 * time.Millisecond}})
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = eng.Register(p)
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	run, _ := p.Trigger(ctx, eng, 1000)
	r, err := eng.Wait(ctx, run)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.State, string(r.Output))
	// Output:
	// resuming after row 500
	// completed "1000 rows, import 100% done, output {\"rows\":1000}"
}
