// Package pipelinesuite is the pipelines' shared test suite: every
// combinator, a large expand and its collapse, nesting, routes, signals,
// halts with their OnHalt delivery and revive, the fan-out cap and
// cancel, the run's input read by its steps, the run's context they
// write (fenced, bounded, the last committed write winning), sealed runs
// across a key rotation, run by a real worker on a
// real database. Package pipeline runs it on SQLite, PostgreSQL and
// MySQL/MariaDB; a dialect package can run it on its own database as it
// runs the conformance suite. RunKilled is the
// test of a worker process killed mid-pipeline, run from a top-level test
// of its own, as are RunKilledWait (killed in a WaitUntil's check) and
// RunKilledRepeat (killed in a RepeatUntil's repetition).
package pipelinesuite

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/worker"
)

// Config names the database the suite runs on.
type Config struct {
	// Dialect is the database's dialect. Required.
	Dialect dialect.Dialect
	// Open returns a new handle on the database, closed by the caller's
	// cleanup. Each subtest opens its own and works under its own random
	// table prefix, dropped at its end. Required.
	Open func(t testing.TB) *sql.DB
}

// tests are the suite's subtests, by name.
var tests = []struct {
	name string
	run  func(e *env)
}{
	{"Chain", chain},
	{"Route", route},
	{"RouteUnmatchedHalts", routeUnmatchedHalts},
	{"DivideCombinesInBranchOrder", divideCombines},
	{"Expand10000ThenCollapse", expandLarge},
	{"ExpandInsideDivide", expandInsideDivide},
	{"NestedCollapsesTargetTheirExpand", nestedCollapses},
	{"StreamOverFanoutCapHalts", streamOverCap},
	{"SignalBeforeWait", signalBeforeWait},
	{"SignalAfterWait", signalAfterWait},
	{"AwaitTimesOut", awaitTimesOut},
	{"HaltDeliversOnHaltThenRevive", haltThenRevive},
	{"ReviveFailedBranchInsideFanOut", reviveInsideFanOut},
	{"ReviveStepRunsItsSubtreeAgain", reviveStep},
	{"HaltIsOneRecordEverywhere", haltOneRecord},
	{"RetentionKeepsAHaltedRunRevivable", retainedHaltRevives},
	{"CancelStopsTheRun", cancelRun},
	{"TriggerTxAndKey", triggerTx},
	{"StepsReadTheRunsInput", stepsReadRunInput},
	{"RunContextCarriedToLaterSteps", runContextCarried},
	{"RunContextBoundsNameTheKey", runContextBounds},
	{"RunContextLastCommitWins", runContextLastCommitWins},
	{"StepsUnderFlowKeys", stepsUnderFlowKeys},
	{"StepTimeoutsOfEveryKind", stepTimeouts},
	{"StepBackoffOnTheDatabaseClock", stepBackoff},
	{"StepDelay", stepDelay},
	{"WaitUntilHoldsWithoutASlot", waitUntilHolds},
	{"WaitUntilTimesOut", waitUntilTimesOut},
	{"RepeatUntilDoneOnSchedule", repeatUntilDone},
	{"RepeatEndsAtUntil", repeatEndsAtUntil},
	{"RepeatOnErrorContinuesOrHalts", repeatOnError},
	{"RepeatCatchUpAfterDowntime", repeatCatchUp},
	{"SealedRunsAcrossKeyRotation", sealedRotation},
	{"UpgradedMidRun", upgradedMidRun},
	{"SleepDurableWithoutASlot", sleepDurable},
}

// Run runs every subtest of the suite, in parallel, on cfg's database.
func Run(t *testing.T, cfg Config) {
	if cfg.Dialect == nil || cfg.Open == nil {
		t.Fatal("pipelinesuite: Config needs a Dialect and an Open")
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db := cfg.Open(t)
			// The servers are shared: a subtest needs few connections.
			db.SetMaxOpenConns(8)
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			t.Cleanup(cancel)
			e := &env{t: t, ctx: ctx, db: db, d: cfg.Dialect, prefix: fmt.Sprintf("pp%08x_", rand.Uint32())}
			t.Cleanup(func() {
				cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := migrations.Drop(cctx, db, cfg.Dialect, e.prefix); err != nil {
					t.Errorf("drop tables %s*: %v", e.prefix, err)
				}
			})
			s, err := core.Open(ctx, db, cfg.Dialect, core.Options{Prefix: e.prefix, Migrate: true})
			if err != nil {
				t.Fatal(err)
			}
			e.store = s
			tc.run(e)
		})
	}
}

// timeout bounds each subtest: generous, for a loaded machine.
var timeout = 6 * time.Minute

// env is one subtest's tables on one database.
type env struct {
	t      *testing.T
	ctx    context.Context
	db     *sql.DB
	d      dialect.Dialect
	prefix string
	store  *core.Store
	// collect, set by Definitions, takes the definitions of the
	// subtest's engine instead of starting it.
	collect *collected
}

// queue is the queue of every suite engine.
const queue = "pipe"

// workerConfig makes a quick worker: polls of 50 ms, a reaper every
// second, heartbeats every 2 s, stale after 30 s (or what the store
// needs): a loaded machine (under -race, on SQLite's one writer) can hold
// a heartbeat back for many seconds, and a live worker taken for dead
// stops itself. Its 8 handlers keep the connections it may hold
// (worker.MinOpenConns, 15 at most) few: the servers are shared.
func workerConfig(s *core.Store, hooks worker.Hooks) worker.Config {
	return worker.Config{
		Queues:            map[string]worker.QueueConfig{queue: {MaxWorkers: 8}},
		PollInterval:      50 * time.Millisecond,
		HeartbeatInterval: 2 * time.Second,
		StaleAfter:        max(30*time.Second, 2*s.MinLease()),
		ReapInterval:      time.Second,
		Hooks:             hooks,
		DefaultKind:       worker.KindConfig{Backoff: func(int) time.Duration { return 10 * time.Millisecond }},
	}
}

// engine starts a worker and an engine running defs, with cfg's OnHalt;
// the worker stops at the end of the test.
func (e *env) engine(cfg pipeline.EngineOptions, defs ...pipeline.Definition) *pipeline.Engine {
	e.t.Helper()
	return e.engineOf(func(wcfg *worker.Config) { worker.FitPool(e.store, *wcfg) }, cfg, defs...)
}

// engineOf is engine with its worker's configuration adjusted by tune.
func (e *env) engineOf(tune func(*worker.Config), cfg pipeline.EngineOptions, defs ...pipeline.Definition) *pipeline.Engine {
	e.t.Helper()
	e.stopAtEngine(defs)
	wcfg := workerConfig(e.store, nil)
	tune(&wcfg)
	w, err := worker.New(e.store, wcfg)
	if err != nil {
		e.t.Fatal(err)
	}
	cfg.Queue = queue
	eng, err := pipeline.New(e.store, w, cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := eng.Register(defs...); err != nil {
		e.t.Fatal(err)
	}
	if err := w.Start(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = w.Stop(ctx)
	})
	return eng
}

// trigger starts a run of d with input.
func (e *env) trigger(eng *pipeline.Engine, d pipeline.Definition, input any) uuid.UUID {
	e.t.Helper()
	id, err := eng.Trigger(e.ctx, d, input)
	if err != nil {
		e.t.Fatal(err)
	}
	return id
}

// waitRun polls until run is in state want (failing at once in another
// final state, or at the test's deadline), then returns it as Get shows
// it.
func (e *env) waitRun(eng *pipeline.Engine, run uuid.UUID, want pipeline.State) pipeline.Run {
	e.t.Helper()
	deadline, _ := e.ctx.Deadline()
	deadline = deadline.Add(-30 * time.Second) // time left to say what was found
	for {
		r, err := e.store.GetRun(e.ctx, run)
		if err != nil {
			e.t.Fatal(err)
		}
		if pipeline.State(r.State) == want {
			break
		}
		if want == pipeline.StateWaiting && r.State == core.RunRunning {
			// Waiting is the run's state as Get derives it from its steps.
			if got, err := eng.Get(e.ctx, run); err == nil && got.State == want {
				return got
			}
		}
		if r.State.Final() || (r.State == core.RunHalted && want != pipeline.StateHalted) || time.Now().After(deadline) {
			got, _ := eng.Get(e.ctx, run)
			e.t.Fatalf("run %s is %s (halt %q: %s), want %s; steps:\n%s", run, r.State, r.HaltReason, r.HaltDetail, want, steps(got))
		}
		time.Sleep(25 * time.Millisecond)
	}
	got, err := eng.Get(e.ctx, run)
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

// steps lists a run's steps for a failure message (the first 40).
func steps(r pipeline.Run) string {
	s := ""
	for i, st := range r.Steps {
		if i == 40 {
			return s + fmt.Sprintf("... and %d more\n", len(r.Steps)-40)
		}
		s += fmt.Sprintf("  %s/%s@%s %s attempt %d out %s err %q\n", st.Step, st.Role, st.Path, st.State, st.Attempt, st.Output, st.Error)
	}
	return s
}

// output decodes a completed run's output as a T.
func output[T any](e *env, r pipeline.Run) T {
	e.t.Helper()
	var v T
	if err := jsonUnmarshal(r.Output, &v); err != nil {
		e.t.Fatalf("run output %s: %v", r.Output, err)
	}
	return v
}

// define is pipeline.Define that fails the test on error.
func define[I, O any](e *env, name string, f pipeline.Flow[I, O], opts ...pipeline.Options) *pipeline.Pipeline[I, O] {
	e.t.Helper()
	p, err := pipeline.Define(name, f, opts...)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}
