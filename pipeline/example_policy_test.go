package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// A payment step with its own policy: each attempt gets one second, a
// failed one (an error, or the timeout) runs again after a backoff that
// doubles from 50 ms up to a second, with 10% jitter, up to five
// attempts. Its first attempt hangs past its timeout, its second is
// declined, its third goes through.
func ExampleStepOptions_retry() {
	dir, _ := os.MkdirTemp("", "plenum-pipeline-retry")
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

	charge := pipeline.Step("charge", func(ctx context.Context, cents int) (string, error) {
		info, _ := pipeline.StepInfo(ctx)
		switch info.Attempt {
		case 1:
			<-ctx.Done() // the payment service hangs: the timeout ends the attempt
			return "", ctx.Err()
		case 2:
			return "", errors.New("declined, try again")
		}
		return fmt.Sprintf("charged %d", cents), nil
	}, pipeline.StepOptions{
		Timeout:     5 * time.Second, // long enough for attempt 2 to fail on its own on a busy machine
		MaxAttempts: 5,
		Backoff:     pipeline.Backoff{Initial: 50 * time.Millisecond, Factor: 2, Max: time.Second, Jitter: 0.1},
	})
	p, err := pipeline.Define("checkout", charge)
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = eng.Register(p)
	_ = w.Start(ctx)
	defer w.Stop(ctx)

	run, _ := p.Trigger(ctx, eng, 500)
	r, err := eng.Wait(ctx, run)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.State, string(r.Output), "on attempt", r.Steps[0].Attempt)
	for _, a := range r.Steps[0].Attempts {
		if strings.Contains(a.Error, worker.ErrDeadline.Error()) {
			a.Error = "timed out"
		}
		fmt.Printf("attempt %d: %s\n", a.N, a.Error)
	}
	// Output:
	// completed "charged 500" on attempt 3
	// attempt 1: timed out
	// attempt 2: declined, try again
}
