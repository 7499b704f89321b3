package pipelinesuite

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/worker"
)

// The environment that makes the test binary the worker process to kill.
const (
	killDSNEnv    = "PLENUM_PIPELINEKILL_DSN"
	killPrefixEnv = "PLENUM_PIPELINEKILL_PREFIX"
)

const (
	killChildren = 24
	// killHangAt is the completions of step "b" after which the process
	// to kill hangs inside the next one's fence.
	killHangAt = 6
)

// KilledConfig names the database RunKilled runs on.
type KilledConfig struct {
	// Dialect is the database's dialect. Required.
	Dialect dialect.Dialect
	// Open opens the database named by a DSN (a file path for SQLite), in
	// this process and in the worker process it kills. Required.
	Open func(dsn string) (*sql.DB, error)
	// DSN returns the database's DSN, or skips t. Required.
	DSN func(t *testing.T) string
}

// killedFlow is the pipeline both processes run: an expand of
// killChildren children, each the chain a then b, then a collapse and a
// last step. Every step writes its row in the audit table through
// pipeline.Fence, in the transaction that completes it; hang, when it
// says so, holds that transaction open, to be killed.
func killedFlow(d dialect.Dialect, audit string, hang func(step string) bool) pipeline.Flow[int, int] {
	step := func(name string) pipeline.Flow[int, int] {
		return pipeline.Step(name, func(ctx context.Context, n int) (int, error) {
			info, _ := pipeline.StepInfo(ctx)
			return n + 1, pipeline.Fence(ctx, func(ctx context.Context, f *core.Fenced) error {
				if _, err := f.ExecContext(ctx, d.Rebind("INSERT INTO "+audit+" (step) VALUES (?)"), info.IdempotencyKey); err != nil {
					return err
				}
				if hang(name) {
					fmt.Printf("holding the fence of %s\n", info.IdempotencyKey)
					select {} // to be killed, the transaction open
				}
				return nil
			})
		})
	}
	collapse := func(ctx context.Context, r *pipeline.Results[int]) (int, error) { return total(ctx, r) }
	return pipeline.Then(pipeline.Expand("fan", upTo, pipeline.Then(step("a"), step("b")), collapse), step("last"))
}

// killConfig is what both processes' workers run with.
func killConfig(s *core.Store, reap time.Duration) worker.Config {
	cfg := workerConfig(s, nil)
	cfg.Queues = map[string]worker.QueueConfig{queue: {MaxWorkers: 4}}
	cfg.ReapInterval = reap
	return cfg
}

// RunKilled starts a worker process on a pipeline, SIGKILLs it mid-run
// (inside the fence of a step, with other steps claimed), and lets a
// worker of this process, with its reaper, finish the run: it completes,
// with the right output, and no step completed twice (each wrote its
// audit row, inside the fence that completed it, exactly once). t must be
// a top-level test: the test binary is run again with -test.run naming
// it to be the worker process, so RunKilled must be its first call.
func RunKilled(t *testing.T, cfg KilledConfig) {
	runChild(t, cfg, killDSNEnv, killPrefixEnv, killedWorker)
	k := setUpKilled(t, cfg)
	ctx, db, audit := k.ctx, k.db, k.audit
	run, _ := k.kill(t, killDSNEnv, killPrefixEnv, "holding a fence", holdingAny)
	killedAt := time.Now()
	t.Logf("%d steps done when killed", count(t, ctx, db, audit))

	p, err := pipeline.Define("killed", killedFlow(k.d, audit, func(string) bool { return false }))
	if err != nil {
		t.Fatal(err)
	}
	r := k.finish(t, k.survivor(t, p), run)
	t.Logf("the survivor finished the run %v after the kill", time.Since(killedAt).Round(time.Millisecond))
	// Each child adds 2; the last step adds 1: sum over i < n of (i+2), plus 1.
	want := killChildren*(killChildren-1)/2 + 2*killChildren + 1
	var got int
	if err := jsonUnmarshal(r.Output, &got); err != nil || got != want {
		t.Errorf("output %s, want %d", r.Output, want)
	}
	steps := 2*killChildren + 1
	if n, distinct := count(t, ctx, db, audit), countDistinct(t, ctx, db, audit); n != steps || distinct != steps {
		t.Errorf("%d audit rows for %d distinct steps, want %d, one each", n, distinct, steps)
	}
	crashed := 0
	for _, s := range r.Steps {
		crashed += s.Crashes
	}
	if crashed == 0 {
		t.Errorf("no step counts a crash: the killed process held no claims")
	}
}

// killedWorker is the process to kill: it triggers the run, prints its id,
// and runs it until step b has completed killHangAt times; the next b
// hangs in its fence, after its audit row, and the process waits there to
// be killed. It returns only the error that kept it from getting there.
func killedWorker(d dialect.Dialect, open func(string) (*sql.DB, error), dsn, prefix string) error {
	var bs atomic.Int32
	p, err := pipeline.Define("killed", killedFlow(d, prefix+"audit", func(step string) bool {
		return step == "b" && bs.Add(1) > killHangAt
	}))
	if err != nil {
		return err
	}
	return childRun(d, open, dsn, prefix, p, killChildren)
}

func count(t *testing.T, ctx context.Context, db *sql.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func countDistinct(t *testing.T, ctx context.Context, db *sql.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(DISTINCT step) FROM "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
