package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/worker"
)

// TestProgress_RetryResumesAndNextStepReads checks on every database that
// a step that fails after reporting partial output leaves it for its
// retry (StepProgress), and that the next step of the chain reads the
// step's last report (PreviousProgress), written with its completion.
func TestProgress_RetryResumesAndNextStepReads(t *testing.T) {
	t.Parallel()
	for _, dbase := range databases {
		t.Run(dbase.Name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			db := dbase.Open(t)
			prefix := fmt.Sprintf("pprog%08x_", rand.Uint32())
			store, err := core.Open(ctx, db, dbase.Dialect, core.Options{Prefix: prefix, Migrate: true})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := migrations.Drop(cctx, db, dbase.Dialect, prefix); err != nil {
					t.Errorf("drop %s*: %v", prefix, err)
				}
			})
			// The interval is far longer than the run: every report
			// written is the last one of an attempt, before its outcome.
			w, err := worker.New(store, worker.Config{Queues: map[string]worker.QueueConfig{"pipelines": {MaxWorkers: 4}},
				PollInterval: 20 * time.Millisecond, ProgressInterval: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			eng, err := pipeline.New(store, w, pipeline.EngineOptions{Queue: "pipelines"})
			if err != nil {
				t.Fatal(err)
			}
			resumed := make(chan core.Progress, 2)
			step := pipeline.Step("import", func(ctx context.Context, total int) (int, error) {
				info, _ := pipeline.StepInfo(ctx)
				if info.Attempt > 1 {
					p, ok, err := pipeline.StepProgress(ctx)
					if err != nil || !ok {
						return 0, fmt.Errorf("attempt %d found no progress: %v", info.Attempt, err)
					}
					resumed <- p
				}
				for row := 1; row <= total; row++ {
					if err := pipeline.SetProgress(ctx, core.Progress{Done: int64(row), Total: int64(total), Output: json.RawMessage(fmt.Sprintf(`{"row":%d,"attempt":%d}`, row, info.Attempt))}); err != nil {
						return 0, err
					}
					if info.Attempt == 1 && row == 7 {
						return 0, errors.New("failed at row 7")
					}
				}
				return total, nil
			})
			next := pipeline.Step("next", func(ctx context.Context, rows int) (core.Progress, error) {
				p, ok, err := pipeline.PreviousProgress(ctx)
				if err == nil && !ok {
					err = errors.New("the previous step's progress is not there")
				}
				return p, err
			})
			p, err := pipeline.Define("progress", pipeline.Then(step, next), pipeline.Options{Backoff: pipeline.Backoff{Initial: 10 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			if err := eng.Register(p); err != nil {
				t.Fatal(err)
			}
			if err := w.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				_ = w.Stop(sctx)
			})
			run, err := p.Trigger(ctx, eng, 20)
			if err != nil {
				t.Fatal(err)
			}
			wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			r, err := eng.Wait(wctx, run)
			if err != nil || r.State != pipeline.StateCompleted {
				t.Fatalf("run = %+v, %v; want completed", r, err)
			}
			got := <-resumed
			if got.Done != 7 || got.Attempt != 1 || !jsonIs(got.Output, `{"row":7,"attempt":1}`) {
				t.Errorf("the retry read %+v (output %s); want attempt 1's report of row 7", got, got.Output)
			}
			var prev core.Progress
			if err := json.Unmarshal(r.Output, &prev); err != nil {
				t.Fatal(err)
			}
			if prev.Done != 20 || prev.Total != 20 || prev.Attempt != 2 || !jsonIs(prev.Output, `{"row":20,"attempt":2}`) {
				t.Errorf("the next step read %+v (output %s); want attempt 2's last report, 20 of 20", prev, prev.Output)
			}
		})
	}
}

// jsonIs reports whether got is the JSON document want, whatever its
// spacing.
func jsonIs(got json.RawMessage, want string) bool {
	var a, b any
	if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}
