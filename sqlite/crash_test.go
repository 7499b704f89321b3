package sqlite_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/sqlite"
)

// crashWorkerEnv, when set to a database path, turns this test binary into
// the worker process that TestCrash_KilledWorkerProcess kills.
const crashWorkerEnv = "PLENUM_TEST_CRASH_WORKER"

// crashWorker claims ten items, completes five of them through fences that
// record an effect row, then enters a sixth fence, writes its effect, says
// so on stdout, and waits there, holding the write transaction open, to be
// killed.
func crashWorker(path string) error {
	ctx := context.Background()
	db, err := sqlite.Open(path)
	if err != nil {
		return err
	}
	store, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{})
	if err != nil {
		return err
	}
	owner, err := store.RegisterOwner(ctx, core.OwnerParams{})
	if err != nil {
		return err
	}
	claims, err := store.Claim(ctx, core.ClaimParams{Queue: "crash", Owner: owner, Limit: 10, Lease: time.Minute})
	if err != nil {
		return err
	}
	if len(claims) != 10 {
		return fmt.Errorf("claimed %d items, want 10", len(claims))
	}
	for i, c := range claims {
		held, err := store.Fence(ctx, c, func(ctx context.Context, f *core.Fenced) error {
			if _, err := f.ExecContext(ctx, "INSERT INTO effects (item) VALUES (?)", c.ID.String()); err != nil {
				return err
			}
			if i == 5 {
				fmt.Println("in-fence", c.ID)
				select {} // killed here, mid-transaction
			}
			return f.Complete(ctx, nil)
		})
		if err != nil || !held {
			return fmt.Errorf("fence: held=%v err=%v", held, err)
		}
	}
	return nil
}

// TestCrash_KilledWorkerProcess kills a real worker process while it holds
// claims and an open write transaction, and proves that the reaper releases
// exactly its unfinished claims as crashes, that the half-done fence left no
// effect, and that every item ends completed with exactly one effect.
func TestCrash_KilledWorkerProcess(t *testing.T) {
	if path := os.Getenv(crashWorkerEnv); path != "" {
		if err := crashWorker(path); err != nil {
			fmt.Fprintln(os.Stderr, "worker:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "crash.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	store, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE effects (item TEXT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	const n = 20
	specs := make([]core.ItemSpec, n)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: "crash", Kind: "k", Priority: i}
	}
	if _, err := store.Enqueue(ctx, specs...); err != nil {
		t.Fatal(err)
	}

	cmd := osexec.Command(os.Args[0], "-test.run=^TestCrash_KilledWorkerProcess$")
	cmd.Env = append(os.Environ(), crashWorkerEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "in-fence ") {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("worker did not reach its fence: %q, %v", line, err)
	}
	stuck := strings.TrimSpace(strings.TrimPrefix(line, "in-fence "))
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	// The killed transaction's effect is gone with it.
	var effects int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM effects").Scan(&effects); err != nil {
		t.Fatal(err)
	}
	if effects != 5 {
		t.Fatalf("effects after the kill = %d, want the 5 committed ones", effects)
	}

	// Time passes on the database clock only: a store an hour ahead reaps.
	later, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{ClockOffset: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	r, err := later.Reap(ctx, core.ReapParams{StaleAfter: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if r.OwnersRemoved != 1 || r.Crashed != 5 || r.TimedOut != 0 {
		t.Fatalf("reap = %+v, want 1 owner removed and 5 crashes", r)
	}

	// A survivor finishes everything, through fences.
	owner, err := later.RegisterOwner(ctx, core.OwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	claims, err := later.Claim(ctx, core.ClaimParams{Queue: "crash", Owner: owner, Limit: n, Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if len(claims) != n-5 {
		t.Fatalf("survivor claimed %d, want %d", len(claims), n-5)
	}
	crashed := 0
	for _, c := range claims {
		if c.CrashCount == 1 {
			crashed++
			if c.Attempt != 1 {
				t.Errorf("item %s: attempt %d after a crash, want 1 (a crash uses no attempt)", c.ID, c.Attempt)
			}
		}
		held, err := later.Fence(ctx, c, func(ctx context.Context, f *core.Fenced) error {
			if _, err := f.ExecContext(ctx, "INSERT INTO effects (item) VALUES (?)", c.ID.String()); err != nil {
				return err
			}
			return f.Complete(ctx, nil)
		})
		if err != nil || !held {
			t.Fatalf("survivor fence: held=%v err=%v", held, err)
		}
	}
	if crashed != 5 {
		t.Fatalf("%d items carry a crash, want 5", crashed)
	}
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM effects").Scan(&effects); err != nil {
		t.Fatal(err)
	}
	var stuckEffects int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM effects WHERE item = ?", stuck).Scan(&stuckEffects); err != nil {
		t.Fatal(err)
	}
	counts, err := store.Counts(ctx, "crash")
	if err != nil {
		t.Fatal(err)
	}
	if effects != n || stuckEffects != 1 || counts[core.StateCompleted] != n {
		t.Fatalf("effects=%d (stuck item: %d), counts=%v; want %d effects, one each, all completed", effects, stuckEffects, counts, n)
	}
}
