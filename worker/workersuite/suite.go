// Package workersuite is the worker runtime's shared test suite: every
// outcome, deadlines, cancellation, graceful shutdown, a lost owner, fenced
// effects, batched completion, batch handlers, retention and the hooks'
// events, run by a real worker on a real database. The worker package
// runs it on SQLite, PostgreSQL and MySQL/MariaDB; a dialect package runs
// it on its own database (the cockroach package on its PostgreSQL
// stand-in), as it runs the conformance suite. RunKilled is the test of a worker process killed
// mid-batch, and RunKilledBatch of a batch handler's process killed with
// a batch in its handler and one inside its outcomes' transaction, each
// run the same way from a top-level test of its own.
package workersuite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/testkit/stoptest"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/worker"
)

// Config names the database the suite runs on.
type Config struct {
	// Dialect is the database's dialect. Required.
	Dialect dialect.Dialect
	// Open returns a new handle on the database, closed by the caller's
	// cleanup (conformance.Opener makes one). Each subtest opens its own
	// and works under its own random table prefix, dropped at its end.
	// Required.
	Open func(t testing.TB) *sql.DB
	// Skip names subtests that do not apply to this database, each with
	// the reason the run reports. Optional.
	Skip map[string]string
}

// tests are the suite's subtests, by name.
var tests = []struct {
	name string
	run  func(e *env)
}{
	{"Outcomes", outcomes},
	{"KindLimitStored", kindLimitStored},
	{"DeadlineRefusesLateResult", deadlineRefusesLateResult},
	{"LateWritesRefused", lateWritesRefused},
	{"ItemTimeoutAndBackoff", itemTimeoutAndBackoff},
	{"CancelStopsRunningHandler", cancelStopsRunningHandler},
	{"HandlerReturnsAfterCancel", handlerReturnsAfterCancel},
	{"GracefulShutdown", gracefulShutdown},
	{"StopsWhenOwnerLost", stopsWhenOwnerLost},
	{"FencedEffectsOnce", fencedEffectsOnce},
	{"CompletesInBatches", completesInBatches},
	{"RunsAtMostMaxWorkers", runsAtMostMaxWorkers},
	{"MaintenancePurgesFinishedItems", maintenancePurgesFinishedItems},
	{"BarrierFiredEvent", barrierFiredEvent},
	{"PeriodicTicksRunOnce", periodicTicksRunOnce},
	{"StoredSchedulesWhileRunning", storedSchedulesWhileRunning},
	{"PausedQueue", pausedQueue},
	{"PanicStackInHistory", panicStackInHistory},
	{"EnqueueWakesIdleWorker", enqueueWakesIdleWorker},
	{"HeartbeatWhileFencesHoldThePool", heartbeatWhileFencesHoldThePool},
	{"HeldEvent", heldEvent},
	{"FlowKeyKind", flowKeyKind},
	{"BatchHandlerEndToEnd", batchHandlerEndToEnd},
	{"BatchItemsEndDifferently", batchItemsEndDifferently},
	{"BatchCancelAndStop", batchCancelAndStop},
}

// patience bounds a subtest's waits for work that takes seconds on a quiet
// machine (a few hundred items through a worker): a loaded one, CI or
// another copy of the suite beside this one, has taken more than a minute
// on SQLite. Only a test that went wrong waits that long.
const patience = 3 * time.Minute

// Run runs every subtest of the suite, in parallel, on cfg's database.
func Run(t *testing.T, cfg Config) {
	if cfg.Dialect == nil || cfg.Open == nil {
		t.Fatal("workersuite: Config needs a Dialect and an Open")
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if why, ok := cfg.Skip[tc.name]; ok {
				t.Skip(why)
			}
			db := cfg.Open(t)
			ctx, cancel := context.WithTimeout(context.Background(), 2*patience)
			t.Cleanup(cancel)
			e := &env{t: t, ctx: ctx, db: db, reopen: cfg.Open, d: cfg.Dialect, prefix: fmt.Sprintf("pw%08x_", rand.Uint32())}
			t.Cleanup(func() {
				cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := migrations.Drop(cctx, db, cfg.Dialect, e.prefix); err != nil {
					t.Errorf("drop tables %s*: %v", e.prefix, err)
				}
			})
			e.store = e.open(0)
			tc.run(e)
		})
	}
}

// env is one subtest's tables on one database.
type env struct {
	t      *testing.T
	ctx    context.Context
	db     *sql.DB
	reopen func(t testing.TB) *sql.DB // Config.Open
	d      dialect.Dialect
	prefix string
	store  *core.Store
}

type greet struct {
	Name string `json:"name"`
}

// open opens a store on the test's tables with its clock shifted by
// offset.
func (e *env) open(offset time.Duration) *core.Store {
	e.t.Helper()
	s, err := core.Open(e.ctx, e.db, e.d, core.Options{Prefix: e.prefix, Migrate: true, ClockOffset: offset})
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// observer opens a store on the test's tables through a handle of its
// own, for reads that must not wait on the pool of the worker's.
func (e *env) observer() *core.Store {
	e.t.Helper()
	s, err := core.Open(e.ctx, e.reopen(e.t), e.d, core.Options{Prefix: e.prefix})
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func (e *env) enqueue(specs ...core.ItemSpec) []uuid.UUID {
	e.t.Helper()
	out, err := e.store.Enqueue(e.ctx, specs...)
	if err != nil {
		e.t.Fatal(err)
	}
	ids := make([]uuid.UUID, len(out))
	for i, o := range out {
		ids[i] = o.ID
	}
	return ids
}

func (e *env) get(id uuid.UUID) core.Item {
	e.t.Helper()
	it, err := e.store.Get(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return it
}

// waitFor polls until ok holds for every id, or fails after within.
func (e *env) waitFor(within time.Duration, what string, ok func(core.Item) bool, ids ...uuid.UUID) {
	e.t.Helper()
	end := time.Now().Add(within)
	for {
		var bad *core.Item
		for _, id := range ids {
			if it := e.get(id); !ok(it) {
				bad = &it
				break
			}
		}
		if bad == nil {
			return
		}
		if time.Now().After(end) {
			e.t.Fatalf("after %v: item %s (%s) is %s, attempt %d, crashes %d, error %q: want %s", within, bad.ID, bad.Kind, bad.State, bad.Attempt, bad.CrashCount, bad.LastError, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// auditTable creates a table of the test's own for effects written inside
// fences, dropped at the end.
func (e *env) auditTable() string {
	e.t.Helper()
	name := e.prefix + "audit"
	e.t.Cleanup(func() {
		for _, stmt := range e.d.DropTable(name) {
			_, _ = e.db.ExecContext(context.Background(), stmt)
		}
	})
	if _, err := e.db.ExecContext(e.ctx, "CREATE TABLE "+name+" (id VARCHAR(64) PRIMARY KEY)"); err != nil {
		e.t.Fatal(err)
	}
	return name
}

func (e *env) count(table string) int {
	e.t.Helper()
	var n int
	if err := e.db.QueryRowContext(e.ctx, "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

// stale is the StaleAfter of the suite's workers: the runtime's default,
// 30 s, or more where the store's dialect raises MinLease. No test but the
// deadline's is about it, and on a loaded machine (CI, or another copy of
// the suite beside this one) heartbeats can be late by seconds, SQLite's
// most of all, whose writers queue behind every fence: a short threshold
// makes a live worker stop itself as lost, and a test about batching or
// fencing then fails for want of a worker.
func (e *env) stale() time.Duration { return max(30*time.Second, 2*e.store.MinLease()) }

// fast are settings that make a test's worker quick where speed costs no
// safety: polls of 50 ms and a reaper pass every second, while the
// heartbeat (every second) and StaleAfter (e.stale()) stay far from what
// a loaded machine's delays reach.
func (e *env) fast(queues map[string]int) worker.Config {
	cfg := worker.Config{
		Queues:            map[string]worker.QueueConfig{},
		PollInterval:      50 * time.Millisecond,
		HeartbeatInterval: time.Second,
		StaleAfter:        e.stale(),
		ReapInterval:      time.Second,
	}
	for q, n := range queues {
		cfg.Queues[q] = worker.QueueConfig{MaxWorkers: n}
	}
	return cfg
}

// start makes, lets setup register handlers on, and starts a worker; it is
// stopped at the end of the test if it still runs.
func (e *env) start(cfg worker.Config, setup func(w *worker.Worker)) *worker.Worker {
	e.t.Helper()
	w, err := worker.New(e.store, cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	setup(w)
	if err := w.Start(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	// Run after the stop below: a worker that stopped itself, lost,
	// explains a test that then waited in vain for it.
	e.t.Cleanup(func() {
		if err := w.Err(); err != nil && e.t.Failed() {
			e.t.Logf("worker %s stopped itself: %v", w.Owner(), err)
		}
	})
	e.t.Cleanup(func() { _ = stoptest.Stop(e.t, w.Stop, 10*time.Second) })
	return w
}

// sameJSON reports whether the JSON document got equals want, whatever
// the database did to its spacing.
func sameJSON(got []byte, want string) bool {
	var a, b any
	if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}
