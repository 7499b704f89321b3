package workersuite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"github.com/plenumdb/plenum/core"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/testkit/crashtest"
	"github.com/plenumdb/plenum/internal/testkit/stoptest"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/worker"
)

// The environment that makes the test binary the worker process to kill.
const (
	crashDSNEnv    = "PLENUM_WORKERCRASH_DSN"
	crashPrefixEnv = "PLENUM_WORKERCRASH_PREFIX"
)

const (
	crashItems = 30
	crashDone  = 5 // the killed process completes these, then hangs in fences
	crashQueue = "crash"
	crashSlots = 8
)

// killedStale is StaleAfter for the processes of the killed-worker
// tests: far from what a loaded machine's delays reach, since a survivor
// counts itself lost when no heartbeat has succeeded for StaleAfter less
// two intervals. No test waits it out: the survivor reads the database
// clock later (survivorStore).
func killedStale(store *core.Store) time.Duration {
	return max(30*time.Second, 2*store.MinLease())
}

// survivorStore opens a store on store's tables whose database clock
// reads later than the killed process's by more than killedStale: the
// killed owner's last heartbeat is stale to the survivor's reaper at
// once, as it would be once the threshold had passed. The survivor's own
// heartbeats are written on the same later clock, so they stay fresh,
// and the reaper still decides by the owners' heartbeats alone.
func survivorStore(ctx context.Context, t *testing.T, store *core.Store) *core.Store {
	t.Helper()
	later, err := core.Open(ctx, store.DB(), store.Dialect(), core.Options{Prefix: store.Prefix(), ClockOffset: killedStale(store) + 5*time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return later
}

// crashConfig is what both processes' workers run with.
func crashConfig(store *core.Store, hooks worker.Hooks, reap time.Duration) worker.Config {
	return worker.Config{
		Queues:            map[string]worker.QueueConfig{crashQueue: {MaxWorkers: crashSlots}},
		PollInterval:      20 * time.Millisecond,
		HeartbeatInterval: 400 * time.Millisecond,
		StaleAfter:        killedStale(store),
		ReapInterval:      reap,
		Hooks:             hooks,
	}
}

// effect is the handler both processes run: its effect, a row in the
// audit table, commits with the item's completion, in one fence.
func effect(d dialect.Dialect, audit string, hang func(job *worker.Job[json.RawMessage]) bool, inFence func()) func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
	return func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		stuck := hang(job)
		return job.Fence(ctx, func(ctx context.Context, f *core.Fenced) error {
			if _, err := f.ExecContext(ctx, d.Rebind("INSERT INTO "+audit+" (item) VALUES (?)"), job.IdempotencyKey()); err != nil {
				return err
			}
			if stuck {
				inFence()
				select {} // holding the fence's transaction, to be killed
			}
			return nil
		})
	}
}

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

// RunKilled is the killed-worker test: see runKilledWorker. t must be a
// top-level test, and the test binary is run again with -test.run naming
// it, to be the worker process to kill: everything the test does before
// RunKilled runs there too, so it must be the test's first call but for
// building cfg.
func RunKilled(t *testing.T, cfg KilledConfig) {
	if cfg.Dialect == nil || cfg.Open == nil || cfg.DSN == nil {
		t.Fatal("workersuite: KilledConfig needs a Dialect, an Open and a DSN")
	}
	runKilledWorker(t, cfg.Dialect, cfg.Open, cfg.DSN)
}

// runKilledWorker starts a worker process, SIGKILLs it once it has
// completed crashDone items and holds the rest of its batch (one of them
// inside an open fence), then lets a worker in this process, with its
// reaper, finish everything: nothing is lost, each effect is made once,
// and the dead process's claims are released as crashes (no attempt used).
func runKilledWorker(t *testing.T, d dialect.Dialect, open func(string) (*sql.DB, error), dsnFor func(t *testing.T) string) {
	if dsn := os.Getenv(crashDSNEnv); dsn != "" {
		err := crashWorker(d, open, dsn, os.Getenv(crashPrefixEnv))
		fmt.Fprintln(os.Stderr, "crash worker:", err)
		os.Exit(2)
	}
	t.Parallel()
	dsn := dsnFor(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db, err := open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	store, prefix, audit := crashtest.AuditedStore(ctx, t, db, d, "item")
	specs := make([]core.ItemSpec, crashItems)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: crashQueue, Kind: "effect", Priority: i}
	}
	if _, err := store.Enqueue(ctx, specs...); err != nil {
		t.Fatal(err)
	}

	proc := crashtest.Start(t, t.Name(), crashDSNEnv+"="+dsn, crashPrefixEnv+"="+prefix)
	line := proc.Await(t, 2*time.Minute, "holding its batch", func(line string) bool { return strings.HasPrefix(line, "holding ") })
	proc.Kill(t)
	killedAt := time.Now()

	count := func(q string) int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count("SELECT COUNT(*) FROM " + audit); n != crashDone {
		t.Fatalf("effects after the kill: %d, want the %d committed (the open fence's rolled back)", n, crashDone)
	}
	held := 0
	if c, err := store.Counts(ctx, crashQueue); err != nil {
		t.Fatal(err)
	} else {
		held = int(c[core.StateClaimed])
		t.Logf("killed worker pid %d (%s): %v", proc.Pid(), line, c)
		if c[core.StateCompleted] != crashDone || held == 0 {
			t.Fatalf("after the kill: %v; want %d completed and claims left held", c, crashDone)
		}
	}

	// The survivor: a worker of this process, with its reaper.
	var crashed atomic.Int64
	later := survivorStore(ctx, t, store)
	w, err := worker.New(later, crashConfig(later, worker.HookFunc(func(_ context.Context, e worker.Event) {
		if e.Kind == worker.EventReaped {
			crashed.Add(int64(e.Reap.Crashed))
		}
	}), 300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	w.HandleFunc("effect", effect(d, audit, func(*worker.Job[json.RawMessage]) bool { return false }, nil))
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for {
		c, err := store.Counts(ctx, crashQueue)
		if err != nil {
			t.Fatal(err)
		}
		if c[core.StateCompleted] == crashItems {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the survivor did not finish: %v", c)
		}
		survivorRuns(t, w)
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("the survivor finished everything %v after the kill", time.Since(killedAt).Round(time.Millisecond))
	if err := stoptest.Stop(t, w.Stop, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if n, distinct := count("SELECT COUNT(*) FROM "+audit), count("SELECT COUNT(DISTINCT item) FROM "+audit); n != crashItems || distinct != crashItems {
		t.Errorf("%d effects for %d distinct items, want %d, one each", n, distinct, crashItems)
	}
	if got := crashed.Load(); got != int64(held) {
		t.Errorf("the reaper released %d claims as crashes, want the %d the dead process held", got, held)
	}
	var withCrash int
	rows, err := db.QueryContext(ctx, "SELECT attempt, crash_count FROM "+migrations.NamesFor(prefix).Items)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var attempt, crashes int
		if err := rows.Scan(&attempt, &crashes); err != nil {
			t.Fatal(err)
		}
		if attempt != 1 || crashes > 1 {
			t.Errorf("an item finished at attempt %d with %d crashes, want attempt 1 (a crash uses none), at most 1 crash", attempt, crashes)
		}
		withCrash += crashes
	}
	if withCrash != held {
		t.Errorf("%d items carry a crash, want %d", withCrash, held)
	}
}

// survivorRuns fails t at once, with the reason, if the worker that is to
// finish a killed process's work has stopped itself (lost): nothing else
// would finish it.
func survivorRuns(t *testing.T, w *worker.Worker) {
	t.Helper()
	select {
	case <-w.Done():
		t.Fatalf("the survivor stopped: %v", w.Err())
	default:
	}
}

// crashWorker is the process to kill: a worker that completes crashDone
// items through fences, then has its other handlers wait; the first of
// them enters a fence, writes its effect and hangs there; it then says so
// on stdout and waits to be killed. It returns only when it fails to get
// there, so its error is never nil.
func crashWorker(d dialect.Dialect, open func(string) (*sql.DB, error), dsn, prefix string) error {
	ctx := context.Background()
	db, err := open(dsn)
	if err != nil {
		return err
	}
	store, err := core.Open(ctx, db, d, core.Options{Prefix: prefix})
	if err != nil {
		return err
	}
	var started, completed atomic.Int32
	fiveDone := make(chan struct{})
	var hanging atomic.Bool
	w, err := worker.New(store, crashConfig(store, worker.HookFunc(func(_ context.Context, e worker.Event) {
		if e.Kind == worker.EventCompleted && completed.Add(1) == crashDone {
			close(fiveDone)
		}
	}), -1))
	if err != nil {
		return err
	}
	w.HandleFunc("effect", effect(d, prefix+"audit", func(job *worker.Job[json.RawMessage]) bool {
		if started.Add(1) <= crashDone {
			return false
		}
		<-fiveDone // the five completions commit first
		if hanging.CompareAndSwap(false, true) {
			// Enter the fence once every slot holds a claim: the claim
			// loop then waits for a free slot, so no claim is in flight
			// when the kill lands (one committing as the process dies
			// would be a held claim that the counts read after the kill
			// miss).
			for started.Load() < crashDone+crashSlots {
				time.Sleep(5 * time.Millisecond)
			}
			return true
		}
		select {} // the rest of the batch waits, held
	}, func() {
		fmt.Printf("holding %d claims after %d completions\n", started.Load()-crashDone, completed.Load())
	}))
	if err := w.Start(ctx); err != nil {
		return err
	}
	select {}
}
