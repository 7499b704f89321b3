package pipelinesuite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/pipeline"
)

// The environment that makes the test binary the worker process to kill
// while a repetition runs.
const (
	killRepeatDSNEnv    = "PLENUM_PIPELINEKILLREPEAT_DSN"
	killRepeatPrefixEnv = "PLENUM_PIPELINEKILLREPEAT_PREFIX"
)

// repeatedFlow is the pipeline both processes run: a RepeatUntil every
// 200 ms whose body writes its audit row, named by the repetition's
// idempotency key, through pipeline.Fence, then runs hold (which may
// block or say done).
func repeatedFlow(d dialect.Dialect, audit string, hold func(rep pipeline.Repetition) bool) pipeline.Flow[int, int] {
	return pipeline.RepeatUntil("tick", func(ctx context.Context, n int, rep pipeline.Repetition) (int, bool, error) {
		info, _ := pipeline.StepInfo(ctx)
		err := pipeline.Fence(ctx, func(ctx context.Context, f *core.Fenced) error {
			_, err := f.ExecContext(ctx, d.Rebind("INSERT INTO "+audit+" (step) VALUES (?)"), info.IdempotencyKey)
			return err
		})
		return n + rep.Index, hold(rep), err
	}, pipeline.RepeatOptions{Every: 200 * time.Millisecond})
}

// RunKilledRepeat starts a worker process on a run that repeats a step,
// SIGKILLs it in the middle of the third repetition (its fenced write
// given, not committed), and lets a worker of this process, with its
// reaper, finish the run, whose body says done at the fifth: the run
// completes with the fifth repetition's output, each repetition wrote its
// audit row once (inside the fence that completed it and made the next),
// none lost and none twice, the third ran again due at the same time,
// and its item counts the crash and no failed attempt. t must be a
// top-level test, as for RunKilled.
func RunKilledRepeat(t *testing.T, cfg KilledConfig) {
	runChild(t, cfg, killRepeatDSNEnv, killRepeatPrefixEnv, killedRepeater)
	k := setUpKilled(t, cfg)
	ctx, d, db, audit := k.ctx, k.d, k.db, k.audit
	var heldAt string
	run, _ := k.kill(t, killRepeatDSNEnv, killRepeatPrefixEnv, "holding a repetition", func(line string) bool {
		at, ok := strings.CutPrefix(line, "holding repetition 2 due at ")
		heldAt = at
		return ok
	})

	var mu sync.Mutex
	var reps []pipeline.Repetition
	p, err := pipeline.Define("repeated", repeatedFlow(d, audit, func(rep pipeline.Repetition) bool {
		mu.Lock()
		defer mu.Unlock()
		reps = append(reps, rep)
		return rep.Index == 4
	}))
	if err != nil {
		t.Fatal(err)
	}
	r := k.finish(t, k.survivor(t, p), run)
	var got int
	if err := jsonUnmarshal(r.Output, &got); err != nil || got != 5 {
		t.Errorf("output %s, want 5 (1 plus the index of the fifth repetition)", r.Output)
	}
	keys := auditKeys(t, ctx, db, audit)
	var want []string
	for k := range 5 {
		want = append(want, fmt.Sprintf("%s/tick#%d", run, k))
	}
	if !slices.Equal(keys, want) {
		t.Errorf("audit rows %v, want one for each repetition, %v", keys, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reps) == 0 || reps[0].Index != 2 || reps[0].At.Format(time.RFC3339Nano) != heldAt {
		t.Errorf("the survivor ran %+v, want repetition 2 first, due at %s as the killed worker's", reps, heldAt)
	}
	crashed := 0
	for _, s := range r.Steps {
		if s.Crashes == 0 {
			continue
		}
		crashed++
		if s.Crashes != 1 || s.Attempt != 1 || len(s.Attempts) != 1 || s.Attempts[0].Outcome != core.OutcomeCrash {
			t.Errorf("the crashed repetition's item: %d crashes, attempt %d, history %+v; want the one crash", s.Crashes, s.Attempt, s.Attempts)
		}
	}
	if crashed != 1 {
		t.Errorf("%d items crashed, want the one of repetition 2", crashed)
	}
}

// auditKeys reads the audit rows, in order.
func auditKeys(t *testing.T, ctx context.Context, db *sql.DB, table string) []string {
	t.Helper()
	rows, err := db.QueryContext(ctx, "SELECT step FROM "+table+" ORDER BY step")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

// killedRepeater is the process to kill: it triggers the run, prints its
// id, runs it, and in the third repetition, its audit row given to the
// fence, prints that it holds it and waits there to be killed. It
// returns only the error that kept it from getting there.
func killedRepeater(d dialect.Dialect, open func(string) (*sql.DB, error), dsn, prefix string) error {
	p, err := pipeline.Define("repeated", repeatedFlow(d, prefix+"audit", func(rep pipeline.Repetition) bool {
		if rep.Index < 2 {
			return false
		}
		fmt.Printf("holding repetition %d due at %s\n", rep.Index, rep.At.Format(time.RFC3339Nano))
		select {} // to be killed, the repetition claimed
	}))
	if err != nil {
		return err
	}
	return childRun(d, open, dsn, prefix, p, 1)
}
