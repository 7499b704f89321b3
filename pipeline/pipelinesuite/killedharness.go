package pipelinesuite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
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

// What the killed-process tests (killed*.go) share: each is a top-level
// test whose binary runs again as the worker process to kill, selected by
// an environment variable naming the database; the test side sets up the
// database, starts that process, kills it where it says it holds, and
// finishes the run with a worker of its own.

// killedChild is a killed-process test's worker process: it runs on the
// database dsn, its tables under prefix, until it is killed, and returns
// only the error that kept it from getting there.
type killedChild func(d dialect.Dialect, open func(string) (*sql.DB, error), dsn, prefix string) error

// runChild makes the test binary the worker process when dsnEnv names a
// database (it never returns then), and checks cfg otherwise. It must be
// a killed-process test's first call.
func runChild(t *testing.T, cfg KilledConfig, dsnEnv, prefixEnv string, child killedChild) {
	if cfg.Dialect == nil || cfg.Open == nil || cfg.DSN == nil {
		t.Fatal("pipelinesuite: KilledConfig needs a Dialect, an Open and a DSN")
	}
	if dsn := os.Getenv(dsnEnv); dsn != "" {
		fmt.Fprintln(os.Stderr, "pipeline worker:", child(cfg.Dialect, cfg.Open, dsn, os.Getenv(prefixEnv)))
		os.Exit(2)
	}
}

// killedSetup is the test side of a killed-process test: its database,
// and the store and audit table its child and survivor share.
type killedSetup struct {
	ctx    context.Context
	d      dialect.Dialect
	dsn    string
	db     *sql.DB
	store  *core.Store
	prefix string
	audit  string
}

// setUpKilled runs t in parallel, opens its database, and makes the
// store and audit table under a prefix of its own; t's calls are bounded
// by three minutes.
func setUpKilled(t *testing.T, cfg KilledConfig) *killedSetup {
	t.Parallel()
	k := &killedSetup{d: cfg.Dialect, dsn: cfg.DSN(t)}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	db, err := cfg.Open(k.dsn)
	if err != nil {
		t.Fatal(err)
	}
	k.ctx, k.db = ctx, db
	k.store, k.prefix, k.audit = crashtest.AuditedStore(ctx, t, db, cfg.Dialect, "step")
	return k
}

// kill starts the worker process, waits for the line held says it holds
// at (what names it in a failure), and kills it there. It returns the run
// the process printed ("run <id>") and the line it held at.
func (k *killedSetup) kill(t *testing.T, dsnEnv, prefixEnv, what string, held func(line string) bool) (uuid.UUID, string) {
	t.Helper()
	proc := crashtest.Start(t, t.Name(), dsnEnv+"="+k.dsn, prefixEnv+"="+k.prefix)
	var runID string
	holding := proc.Await(t, 2*time.Minute, what, func(line string) bool {
		if id, ok := strings.CutPrefix(line, "run "); ok {
			runID = id
		}
		return held(line)
	})
	proc.Kill(t)
	t.Logf("killed worker pid %d (%s)", proc.Pid(), holding)
	run, err := uuid.Parse(runID)
	if err != nil {
		t.Fatalf("the killed worker printed no run before it held: %v", err)
	}
	return run, holding
}

// holdingAny is kill's held for a process that prints "holding ..." where
// it holds.
func holdingAny(line string) bool { return strings.HasPrefix(line, "holding ") }

// survivor starts a worker of this process, with its reaper, running
// def, stopped when t ends; it returns its engine.
//
// The survivor's store reads the database clock later than the killed
// process did, by more than the stale threshold: the killed owner's last
// heartbeat is stale to its reaper at once, as it would be once the
// threshold had passed, where waiting it out would cost every test half
// a minute. Its own heartbeats are written on the same later clock, so
// they stay fresh, and the reaper still decides by the owners' heartbeats
// on the database clock alone.
func (k *killedSetup) survivor(t *testing.T, def pipeline.Definition) *pipeline.Engine {
	t.Helper()
	cfg := killConfig(k.store, 300*time.Millisecond)
	later, err := core.Open(k.ctx, k.db, k.d, core.Options{Prefix: k.prefix, ClockOffset: cfg.StaleAfter + 5*time.Second})
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.New(later, cfg)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := pipeline.New(later, w, pipeline.EngineOptions{Queue: queue})
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Register(def); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(k.ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stoptest.Stop(t, w.Stop, 10*time.Second) })
	return eng
}

// finish waits for run on eng and requires it completed.
func (k *killedSetup) finish(t *testing.T, eng *pipeline.Engine, run uuid.UUID) pipeline.Run {
	t.Helper()
	r, err := eng.Wait(k.ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if r.State != pipeline.StateCompleted {
		t.Fatalf("run %s, want completed", r.State)
	}
	return r
}

// childRun is the worker process's side of a killed-process test: it
// registers def (whose flow holds where the test kills it), triggers it
// with input on the database dsn, prints the run's id ("run <id>"), and
// runs it with a worker without a reaper until the process is killed. It
// returns only the error that kept it from getting there.
func childRun(d dialect.Dialect, open func(string) (*sql.DB, error), dsn, prefix string, def pipeline.Definition, input any) error {
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
	if err := eng.Register(def); err != nil {
		return err
	}
	run, err := eng.Trigger(ctx, def, input)
	if err != nil {
		return err
	}
	fmt.Printf("run %s\n", run)
	if err := w.Start(ctx); err != nil {
		return err
	}
	select {}
}
