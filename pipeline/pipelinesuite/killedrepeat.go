package pipelinesuite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/testkit/crashtest"
	"github.com/plenumdb/plenum/internal/testkit/stoptest"
	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/worker"
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
	if cfg.Dialect == nil || cfg.Open == nil || cfg.DSN == nil {
		t.Fatal("pipelinesuite: KilledConfig needs a Dialect, an Open and a DSN")
	}
	d := cfg.Dialect
	if dsn := os.Getenv(killRepeatDSNEnv); dsn != "" {
		fmt.Fprintln(os.Stderr, "pipeline worker:", killedRepeater(d, cfg.Open, dsn, os.Getenv(killRepeatPrefixEnv)))
		os.Exit(2)
	}
	t.Parallel()
	dsn := cfg.DSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db, err := cfg.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	store, prefix, audit := crashtest.AuditedStore(ctx, t, db, d, "step")

	proc := crashtest.Start(t, t.Name(), killRepeatDSNEnv+"="+dsn, killRepeatPrefixEnv+"="+prefix)
	var runID, heldAt string
	holding := proc.Await(t, 2*time.Minute, "holding a repetition", func(line string) bool {
		if id, ok := strings.CutPrefix(line, "run "); ok {
			runID = id
		}
		at, ok := strings.CutPrefix(line, "holding repetition 2 due at ")
		heldAt = at
		return ok
	})
	proc.Kill(t)
	t.Logf("killed worker pid %d (%s)", proc.Pid(), holding)

	var mu sync.Mutex
	var reps []pipeline.Repetition
	w, err := worker.New(store, killConfig(store, 300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := pipeline.New(store, w, pipeline.EngineOptions{Queue: queue})
	if err != nil {
		t.Fatal(err)
	}
	p, err := pipeline.Define("repeated", repeatedFlow(d, audit, func(rep pipeline.Repetition) bool {
		mu.Lock()
		defer mu.Unlock()
		reps = append(reps, rep)
		return rep.Index == 4
	}))
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Register(p); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stoptest.Stop(t, w.Stop, 10*time.Second) }()
	run, err := uuid.Parse(runID)
	if err != nil {
		t.Fatal(err)
	}
	r, err := eng.Wait(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if r.State != pipeline.StateCompleted {
		t.Fatalf("run %s, want completed", r.State)
	}
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
	ctx := context.Background()
	db, err := open(dsn)
	if err != nil {
		return err
	}
	store, err := core.Open(ctx, db, d, core.Options{Prefix: prefix})
	if err != nil {
		return err
	}
	w, err := worker.New(store, killConfig(store, -1))
	if err != nil {
		return err
	}
	eng, err := pipeline.New(store, w, pipeline.EngineOptions{Queue: queue})
	if err != nil {
		return err
	}
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
	if err := eng.Register(p); err != nil {
		return err
	}
	run, err := eng.Trigger(ctx, p, 1)
	if err != nil {
		return err
	}
	fmt.Printf("run %s\n", run)
	if err := w.Start(ctx); err != nil {
		return err
	}
	select {}
}
