// Package crashtest kills a real worker process in the middle of a fenced
// transaction and checks what the database and the reaper make of it. It
// serves the dialect packages' own tests: every database must roll back the
// dead process's transaction, release its row locks, and let the reaper
// hand its unfinished claims to a survivor, with each effect made once.
//
// The worker is the calling test binary itself, started again with an
// environment variable that makes Run play the worker instead. Start and
// Process do that part for the killed-worker tests of the worker and
// pipeline suites too.
package crashtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// Config says which database the crash test runs against.
type Config struct {
	// Dialect is the dialect under test.
	Dialect dialect.Dialect
	// Open opens a new handle on the database named by DSN. It runs in the
	// test process and in the worker process.
	Open func(dsn string) (*sql.DB, error)
	// DSN names the database; for SQLite, a file path.
	DSN string
}

// Environment variables that make the test binary a worker.
const (
	workerEnv = "PLENUM_CRASHTEST_WORKER"
	prefixEnv = "PLENUM_CRASHTEST_PREFIX"
)

const (
	items     = 20
	claimed   = 10
	completed = 5 // the worker completes these, then hangs in the next fence
	queue     = "crash"
)

// Run kills a worker process inside an open fenced transaction and checks
// that its half-done effect is gone, that the reaper releases exactly its
// unfinished claims as crashes (using no attempt), and that a survivor
// completes every item with exactly one effect each.
//
// Call it from a top-level test function (not a subtest): the worker is
// started with -test.run naming that function. In the worker process Run
// never returns.
func Run(t *testing.T, cfg Config) {
	if dsn := os.Getenv(workerEnv); dsn != "" {
		if err := worker(cfg, dsn, os.Getenv(prefixEnv)); err != nil {
			fmt.Fprintln(os.Stderr, "crash worker:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	if strings.Contains(t.Name(), "/") {
		t.Fatal("crashtest.Run must be called from a top-level test function")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	d := cfg.Dialect
	db, err := cfg.Open(cfg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	prefix := "crash_" + randomTag() + "_"
	effects := prefix + "effects"
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, stmt := range d.DropTable(effects) {
			_, _ = db.ExecContext(cctx, stmt)
		}
		if err := migrations.Drop(cctx, db, d, prefix); err != nil {
			t.Errorf("drop the crash test's tables: %v", err)
		}
		db.Close()
	})
	store, err := core.Open(ctx, db, d, core.Options{Prefix: prefix, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range d.CreateTable(effectsTable(effects)) {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	specs := make([]core.ItemSpec, items)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: queue, Kind: "k", Priority: i}
	}
	if _, err := store.Enqueue(ctx, specs...); err != nil {
		t.Fatal(err)
	}

	proc := Start(t, t.Name(), workerEnv+"="+cfg.DSN, prefixEnv+"="+prefix)
	line := proc.Await(t, 2*time.Minute, "reaching its fence", func(line string) bool { return strings.HasPrefix(line, "in-fence ") })
	stuck := strings.TrimSpace(strings.TrimPrefix(line, "in-fence "))
	proc.Kill(t)

	count := func(where string, args ...any) int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(ctx, d.Rebind("SELECT COUNT(*) FROM "+effects+where), args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// The killed transaction's effect is gone with it.
	if n := count(""); n != completed {
		t.Fatalf("effects after the kill = %d, want the %d committed ones", n, completed)
	}

	// Time passes on the database clock only: a store an hour ahead reaps.
	// Its release of the stuck item waits, if need be, until the server has
	// noticed the dead connection and dropped its locks.
	later, err := core.Open(ctx, db, d, core.Options{Prefix: prefix, ClockOffset: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	r, err := later.Reap(ctx, core.ReapParams{StaleAfter: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killed worker pid %d mid-fence on item %s; reap: %+v", proc.Pid(), stuck, r)
	if r.OwnersRemoved != 1 || r.Crashed != claimed-completed || r.TimedOut != 0 {
		t.Fatalf("reap = %+v, want 1 owner removed and %d crashes", r, claimed-completed)
	}

	// A survivor finishes everything, through fences.
	owner, err := later.RegisterOwner(ctx, core.RegisterOwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	claims, err := later.Claim(ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: items, Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if len(claims) != items-completed {
		t.Fatalf("the survivor claimed %d, want %d", len(claims), items-completed)
	}
	crashed := 0
	for _, c := range claims {
		if c.CrashCount == 1 {
			crashed++
			if c.Attempt != 1 {
				t.Errorf("item %s: attempt %d after a crash, want 1 (a crash uses no attempt)", c.ID, c.Attempt)
			}
		}
		held, err := later.Fence(ctx, c, effect(d, effects, c))
		if err != nil || !held {
			t.Fatalf("survivor fence: held=%v err=%v", held, err)
		}
	}
	if crashed != claimed-completed {
		t.Fatalf("%d items carry a crash, want %d", crashed, claimed-completed)
	}
	counts, err := store.Counts(ctx, queue)
	if err != nil {
		t.Fatal(err)
	}
	all, ofStuck := count(""), count(" WHERE item = ?", stuck)
	if all != items || ofStuck != 1 || counts[core.StateCompleted] != items {
		t.Fatalf("effects=%d (stuck item: %d), counts=%v; want %d effects, one each, all completed", all, ofStuck, counts, items)
	}
}

// worker claims ten items, completes five through fences that record an
// effect, then enters a sixth fence, writes its effect, says so on stdout,
// and waits there, holding the transaction and its row locks, to be killed.
func worker(cfg Config, dsn, prefix string) error {
	ctx := context.Background()
	db, err := cfg.Open(dsn)
	if err != nil {
		return err
	}
	store, err := core.Open(ctx, db, cfg.Dialect, core.Options{Prefix: prefix})
	if err != nil {
		return err
	}
	owner, err := store.RegisterOwner(ctx, core.RegisterOwnerParams{})
	if err != nil {
		return err
	}
	claims, err := store.Claim(ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: claimed, Lease: time.Minute})
	if err != nil {
		return err
	}
	if len(claims) != claimed {
		return fmt.Errorf("claimed %d items, want %d", len(claims), claimed)
	}
	for i, c := range claims {
		do := effect(cfg.Dialect, prefix+"effects", c)
		held, err := store.Fence(ctx, c, func(ctx context.Context, f *core.Fenced) error {
			if i < completed {
				return do(ctx, f)
			}
			if _, err := f.ExecContext(ctx, cfg.Dialect.Rebind("INSERT INTO "+prefix+"effects (item) VALUES (?)"), c.ID.String()); err != nil {
				return err
			}
			fmt.Println("in-fence", c.ID)
			select {} // killed here, mid-transaction
		})
		if err != nil || !held {
			return fmt.Errorf("fence: held=%v err=%v", held, err)
		}
	}
	return nil
}

// effect is a fence body that records one effect row for c and completes it.
func effect(d dialect.Dialect, table string, c core.Claim) func(context.Context, *core.Fenced) error {
	return func(ctx context.Context, f *core.Fenced) error {
		if _, err := f.ExecContext(ctx, d.Rebind("INSERT INTO "+table+" (item) VALUES (?)"), c.ID.String()); err != nil {
			return err
		}
		return f.Complete(ctx, nil)
	}
}

func effectsTable(name string) dialect.Table {
	return dialect.Table{
		Name:       name,
		Columns:    []dialect.Column{{Name: "item", Type: dialect.String, Size: 64}},
		PrimaryKey: []string{"item"},
	}
}

func randomTag() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
