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
)

// The environment that makes the test binary the worker process to kill
// while a run waits on a condition.
const (
	killWaitDSNEnv    = "PLENUM_PIPELINEKILLWAIT_DSN"
	killWaitPrefixEnv = "PLENUM_PIPELINEKILLWAIT_PREFIX"
)

// waitedFlow is the pipeline both processes run: a step, a WaitUntil on
// check, a step. Both steps write their audit rows through
// pipeline.Fence, in the transactions that complete them; the wait's
// output is what check found.
func waitedFlow(d dialect.Dialect, audit string, check func(ctx context.Context, n int) (int, bool, error)) pipeline.Flow[int, int] {
	step := func(name string, k int) pipeline.Flow[int, int] {
		return pipeline.Step(name, func(ctx context.Context, n int) (int, error) {
			info, _ := pipeline.StepInfo(ctx)
			return n + k, pipeline.Fence(ctx, func(ctx context.Context, f *core.Fenced) error {
				_, err := f.ExecContext(ctx, d.Rebind("INSERT INTO "+audit+" (step) VALUES (?)"), info.IdempotencyKey)
				return err
			})
		})
	}
	wait := pipeline.WaitUntil("ready", check, pipeline.Flow[int, int]{},
		pipeline.WaitOptions{Every: pipeline.Backoff{Initial: 100 * time.Millisecond, Max: 400 * time.Millisecond}})
	return pipeline.Then(pipeline.Then(step("before", 1), wait), step("after", 1))
}

// RunKilledWait starts a worker process on a run that waits on a
// condition, SIGKILLs it in the middle of its second check (the first
// found the condition false and put the step back to wait), makes the
// condition true, and lets a worker of this process, with its reaper,
// finish the run: it completes with the output of the condition the
// survivor found, the steps before and after the wait each wrote their
// audit row once (inside the fences that completed them), and the wait's
// item counts the crash and no failed attempt. t must be a top-level
// test, as for RunKilled.
func RunKilledWait(t *testing.T, cfg KilledConfig) {
	runChild(t, cfg, killWaitDSNEnv, killWaitPrefixEnv, killedWaiter)
	k := setUpKilled(t, cfg)
	ctx, d, db, audit := k.ctx, k.d, k.db, k.audit
	flag := k.prefix + "flag"
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+flag+" (v INTEGER NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, stmt := range d.DropTable(flag) {
			_, _ = db.ExecContext(context.Background(), stmt)
		}
	})

	run, _ := k.kill(t, killWaitDSNEnv, killWaitPrefixEnv, "holding a check", holdingAny)
	if _, err := db.ExecContext(ctx, d.Rebind("INSERT INTO "+flag+" (v) VALUES (?)"), 40); err != nil {
		t.Fatal(err)
	}

	var checks atomic.Int32
	p, err := pipeline.Define("waited", waitedFlow(d, audit, func(ctx context.Context, n int) (int, bool, error) {
		checks.Add(1)
		var v sql.NullInt64
		if err := db.QueryRowContext(ctx, "SELECT MAX(v) FROM "+flag).Scan(&v); err != nil {
			return 0, false, err
		}
		return n + int(v.Int64), v.Valid, nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	r := k.finish(t, k.survivor(t, p), run)
	// 1 -> before 2 -> ready 42 -> after 43.
	var got int
	if err := jsonUnmarshal(r.Output, &got); err != nil || got != 43 {
		t.Errorf("output %s, want 43", r.Output)
	}
	n, distinct := count(t, ctx, db, audit), countDistinct(t, ctx, db, audit)
	if n != 2 || distinct != 2 {
		t.Errorf("%d audit rows for %d distinct steps, want 2, one each (before and after the wait)", n, distinct)
	}
	for _, s := range r.Steps {
		if s.Step != "ready" {
			continue
		}
		if s.Crashes != 1 || s.Attempt != 1 || len(s.Attempts) != 1 || s.Attempts[0].Outcome != core.OutcomeCrash {
			t.Errorf("the wait's item: %d crashes, attempt %d, history %+v; want the one crash, and its checks using no attempt", s.Crashes, s.Attempt, s.Attempts)
		}
	}
	if checks.Load() < 1 {
		t.Errorf("the survivor checked the condition %d times", checks.Load())
	}
}

// killedWaiter is the process to kill: it triggers the run, prints its
// id, runs it, and on the wait's second check prints that it holds it
// and waits there to be killed. The first check finds the condition
// false. It returns only the error that kept it from getting there.
func killedWaiter(d dialect.Dialect, open func(string) (*sql.DB, error), dsn, prefix string) error {
	var checks atomic.Int32
	p, err := pipeline.Define("waited", waitedFlow(d, prefix+"audit", func(ctx context.Context, n int) (int, bool, error) {
		if checks.Add(1) == 1 {
			fmt.Println("checked once")
			return 0, false, nil
		}
		fmt.Println("holding the second check")
		select {} // to be killed, the check claimed
	}))
	if err != nil {
		return err
	}
	return childRun(d, open, dsn, prefix, p, 1)
}
