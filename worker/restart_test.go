package worker_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"sync/atomic"
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
// drains items whose handlers write an audit row through a fence, and
// fans parents out into such items by Store.Expand, page by page, each
// restart falling in the middle of one parent's expansion: the worker
// reconnects by itself, every item completes once with one audit row,
// every barrier counts each child's arrival once and fires once, and
// its join runs once.
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

// The restart test's fan-outs: restartParents parents, each expanded into
// restartPages pages of restartPerPage children, and a join each.
const (
	restartParents = 4
	restartPages   = 10
	restartPerPage = 5
	// restartHeld is the page at which an expansion waits for a restart.
	restartHeld = 3
	// restartTotal counts every item: the plain ones, the parents, their
	// children and their joins.
	restartTotal = restartItems + restartParents*(2+restartPages*restartPerPage)
)

func survivesRestarts(t *testing.T, srv *privatedb.Server, d dialect.Dialect, open func(string) (*sql.DB, error)) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db, err := open(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	store, prefix, audit := crashtest.AuditedStore(ctx, t, db, d, "id")
	// The parents first, so that their expansions start before the first
	// restart and their children run among the plain items.
	specs := make([]core.ItemSpec, restartParents, restartParents+restartItems)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: "q", Kind: "parent", MaxAttempts: 100}
	}
	for range restartItems {
		specs = append(specs, core.ItemSpec{Queue: "q", Kind: "audited", MaxAttempts: 100})
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
	// The first expansions to reach page restartHeld wait there, one for
	// each restart, until it is over: so each restart falls between two
	// pages of an expansion.
	modes := []privatedb.Shutdown{privatedb.Immediate, privatedb.Fast}
	var holds atomic.Int32
	reached, restarted := make([]chan struct{}, len(modes)), make([]chan struct{}, len(modes))
	for i := range modes {
		reached[i], restarted[i] = make(chan struct{}), make(chan struct{})
	}
	pages := func(ctx context.Context, cursor string) (core.ChildPage, error) {
		page := 0
		if cursor != "" {
			var err error
			if page, err = strconv.Atoi(cursor); err != nil {
				return core.ChildPage{}, err
			}
		}
		if page == restartHeld {
			if i := int(holds.Add(1)) - 1; i < len(modes) {
				close(reached[i])
				select {
				case <-restarted[i]:
				case <-ctx.Done():
					return core.ChildPage{}, ctx.Err()
				}
			}
		}
		kids := make([]core.ChildSpec, restartPerPage)
		for j := range kids {
			kids[j] = core.ChildSpec{Key: fmt.Sprintf("%d-%d", page, j), Kind: "audited", MaxAttempts: 100}
		}
		return core.ChildPage{Children: kids, Next: strconv.Itoa(page + 1), Done: page == restartPages-1}, nil
	}
	w.HandleFunc("parent", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		_, err := store.Expand(ctx, job.Claim(), core.ExpandParams{
			Barrier:        core.BarrierSpec{Name: "fan", Join: core.JoinSpec{Queue: "q", Kind: "audited", MaxAttempts: 100}},
			Next:           pages,
			CompleteParent: true,
		})
		return err
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
	for i, mode := range modes {
		if !awaitCount(t, ctx, completed, restartTotal*(i+1)/3) {
			t.Fatalf("fewer than %d items completed within %v", restartTotal*(i+1)/3, testWait)
		}
		select {
		case <-reached[i]:
		case <-time.After(testWait):
			t.Fatalf("no expansion reached page %d within %v", restartHeld, testWait)
		}
		at := time.Now()
		err := srv.Restart(mode)
		close(restarted[i])
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("restarted the server (%v) in %v, %d items completed", mode, time.Since(at).Round(time.Millisecond), completed())
	}
	if !awaitCount(t, ctx, completed, restartTotal) {
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
	// Every item but the parents writes an audit row: the plain items,
	// the children and the joins.
	audited := restartTotal - restartParents
	var rows, distinct int
	if err := watcher.QueryRowContext(ctx, "SELECT COUNT(*), COUNT(DISTINCT id) FROM "+audit).Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if rows != audited || distinct != audited {
		t.Errorf("%d audit rows for %d items (%d distinct), want one each", rows, audited, distinct)
	}
	var barriers, expected, arrived, failed, fired, joins, joinItems int
	if err := watcher.QueryRowContext(ctx, "SELECT COUNT(*), SUM(expected), SUM(arrived), SUM(failed), COUNT(fired_at), COUNT(DISTINCT join_item_id) FROM "+prefix+"barriers").
		Scan(&barriers, &expected, &arrived, &failed, &fired, &joins); err != nil {
		t.Fatal(err)
	}
	if err := watcher.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+prefix+"items WHERE join_barrier_id IS NOT NULL").Scan(&joinItems); err != nil {
		t.Fatal(err)
	}
	children := restartParents * restartPages * restartPerPage
	if barriers != restartParents || expected != children || arrived != children || failed != 0 || fired != restartParents || joins != restartParents || joinItems != restartParents {
		t.Errorf("%d barriers expecting %d children, %d arrived, %d failed, %d fired, %d joins named, %d join items; want %d barriers, %d children expected and arrived, none failed, each fired once with one join",
			barriers, expected, arrived, failed, fired, joins, joinItems, restartParents, children)
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
