package worker_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/testkit/crashtest"
	"github.com/plenumdb/plenum/internal/testkit/privatedb"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/worker"
)

// TestWorker_SurvivesServerRestart_Postgres and _MySQL restart the
// worker's database server, immediately and then fast, while the worker
// drains items whose handlers write an audit row through a fence: the
// worker reconnects by itself, and every item completes once with one
// audit row.
func TestWorker_SurvivesServerRestart_Postgres(t *testing.T) {
	t.Parallel()
	survivesRestarts(t, privatedb.Postgres(t, privatedb.Options{}), postgres.Dialect(), postgres.Open)
}

func TestWorker_SurvivesServerRestart_MySQL(t *testing.T) {
	t.Parallel()
	survivesRestarts(t, privatedb.MariaDB(t, privatedb.Options{}), mysql.Dialect(), mysql.Open)
}

// restartItems is how many items a restart test drains: enough that both
// restarts fall in the middle of the run.
const restartItems = 400

func survivesRestarts(t *testing.T, srv *privatedb.Server, d dialect.Dialect, open func(string) (*sql.DB, error)) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db, err := open(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	store, prefix, audit := crashtest.AuditedStore(ctx, t, db, d, "id")
	specs := make([]core.ItemSpec, restartItems)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: "q", Kind: "audited", MaxAttempts: 100}
	}
	if _, err := store.Enqueue(ctx, specs...); err != nil {
		t.Fatal(err)
	}
	cfg := fast(map[string]int{"q": 4})
	// A restart, crash recovery included, must not look like a dead
	// worker: the worker's own bound on failed heartbeats is far above it.
	cfg.HeartbeatInterval, cfg.StaleAfter = 500*time.Millisecond, 20*time.Second
	// A claim whose commit the restart cut off may be held by this live
	// worker without its knowing until the lease runs out (a timeout, an
	// attempt used, MaxAttempts 100): well inside the test's wait, which
	// a lease of a minute was not, and above StaleAfter plus a heartbeat,
	// as the worker requires.
	cfg.DefaultKind.Timeout = 25 * time.Second
	// An attempt that failed in a restart runs again at the next poll.
	cfg.DefaultKind.Backoff = func(int) time.Duration { return 0 }
	cfg.Logger = slog.New(slog.NewTextHandler(tlog{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	w, err := worker.New(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.HandleFunc("audited", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		// The work the handler stands for, so that the restarts fall
		// while items are being claimed, run and completed.
		time.Sleep(5 * time.Millisecond)
		return job.Fence(ctx, func(ctx context.Context, f *core.Fenced) error {
			_, err := f.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s (id) VALUES ('%s')", audit, job.ID()))
			return err
		})
	})
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	watcher, err := open(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close()
	completed := func() int {
		var n int
		if err := watcher.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+prefix+"items WHERE state = 'completed'").Scan(&n); err != nil {
			return -1 // the server is restarting: ask again
		}
		return n
	}
	for i, mode := range []privatedb.Shutdown{privatedb.Immediate, privatedb.Fast} {
		if !awaitCount(t, ctx, completed, restartItems*(i+1)/3) {
			t.Fatalf("fewer than %d items completed within %v", restartItems*(i+1)/3, testWait)
		}
		at := time.Now()
		if err := srv.Restart(mode); err != nil {
			t.Fatal(err)
		}
		t.Logf("restarted the server (%v) in %v, %d items completed", mode, time.Since(at).Round(time.Millisecond), completed())
	}
	if !awaitCount(t, ctx, completed, restartItems) {
		rows, err := watcher.QueryContext(ctx, "SELECT id, state, attempt, claimed_at, available_at, COALESCE(last_error, '') FROM "+prefix+"items WHERE state <> 'completed'")
		if err == nil {
			for rows.Next() {
				var id, state, at, lease, lastErr any
				var attempt int
				_ = rows.Scan(&id, &state, &attempt, &at, &lease, &lastErr)
				t.Logf("not completed: %v %s attempt %d claimed at %v available at %v: %s", id, state, attempt, at, lease, lastErr)
			}
			rows.Close()
		}
		t.Fatalf("not every item completed after the restarts within %v", testWait)
	}
	select {
	case <-w.Done():
		t.Fatalf("the worker stopped by itself: %v", w.Err())
	default:
	}
	stop, cancelStop := context.WithTimeout(ctx, testWait)
	defer cancelStop()
	if err := w.Stop(stop); err != nil {
		t.Fatalf("stop: %v", err)
	}
	var rows, distinct int
	if err := watcher.QueryRowContext(ctx, "SELECT COUNT(*), COUNT(DISTINCT id) FROM "+audit).Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if rows != restartItems || distinct != restartItems {
		t.Errorf("%d audit rows for %d items (%d distinct), want one each", rows, restartItems, distinct)
	}
}

// awaitCount reports whether count returned at least want within
// testWait.
func awaitCount(t *testing.T, ctx context.Context, count func() int, want int) bool {
	t.Helper()
	deadline := time.Now().Add(testWait)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for count() < want {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return true
}

// tlog writes the worker's log lines to the test's log.
type tlog struct{ t *testing.T }

func (l tlog) Write(b []byte) (int, error) { l.t.Log(string(b)); return len(b), nil }
