package postgres_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/testkit/stoptest"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/worker"
)

var _ dialect.Notifier = postgres.Dialect().(dialect.Notifier)

// twoProcesses opens two stores on the same tables, each on its own
// *sql.DB, as two processes would, under a random prefix dropped at the
// end.
func twoProcesses(t *testing.T) (ctx context.Context, here, there *core.Store, prefix string, db *sql.DB) {
	t.Helper()
	dsn := harness.DSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	prefix = fmt.Sprintf("pn%08x_", rand.Uint32())
	open := func() (*core.Store, *sql.DB) {
		db := conformance.Opener(postgres.DriverName, dsn)(t)
		s, err := core.Open(ctx, db, postgres.Dialect(), core.Options{Prefix: prefix, Migrate: true})
		if err != nil {
			t.Fatal(err)
		}
		return s, db
	}
	here, db = open()
	there, _ = open()
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := migrations.Drop(cctx, db, postgres.Dialect(), prefix); err != nil {
			t.Errorf("drop tables %s*: %v", prefix, err)
		}
	})
	return ctx, here, there, prefix, db
}

func listening(t *testing.T, s *core.Store, n uint64) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); s.Stats().Listens < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("after 20 s the store has begun listening %d times, want %d", s.Stats().Listens, n)
		}
	}
}

func wokenWithin(sub *core.Subscription, d time.Duration) bool {
	select {
	case <-sub.C:
		return true
	case <-time.After(d):
		return false
	}
}

// TestNotify_SentAtCommit checks that another process's enqueue wakes
// this store's subscriber through NOTIFY, and only when it commits: an
// EnqueueTx in an open transaction wakes nobody until its commit, and one
// rolled back never does.
func TestNotify_SentAtCommit(t *testing.T) {
	t.Parallel()
	ctx, here, there, _, _ := twoProcesses(t)
	sub, err := here.Subscribe("q")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	listening(t, here, 1)
	wokenWithin(sub, time.Second) // listening wakes every subscriber once

	if _, err := there.Enqueue(ctx, core.ItemSpec{Queue: "q", Kind: "k"}); err != nil {
		t.Fatal(err)
	}
	if !wokenWithin(sub, 10*time.Second) {
		t.Fatal("another store's Enqueue did not wake the subscriber within 10 s")
	}

	tx, err := there.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := there.EnqueueTx(ctx, tx, core.ItemSpec{Queue: "q", Kind: "k"}); err != nil {
		t.Fatal(err)
	}
	if wokenWithin(sub, 300*time.Millisecond) {
		t.Fatal("an EnqueueTx woke the subscriber before its transaction committed")
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if !wokenWithin(sub, 10*time.Second) {
		t.Fatal("a committed EnqueueTx did not wake the subscriber within 10 s")
	}

	tx, err = there.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := there.EnqueueTx(ctx, tx, core.ItemSpec{Queue: "q", Kind: "k"}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if wokenWithin(sub, 300*time.Millisecond) {
		t.Fatal("a rolled-back EnqueueTx woke the subscriber")
	}
}

// TestNotify_LostListenerReconnects terminates the listening session (that
// session only, found by its LISTEN) and checks that the store listens
// again on a new one, through which another store's enqueue still wakes
// the subscriber.
func TestNotify_LostListenerReconnects(t *testing.T) {
	t.Parallel()
	ctx, here, there, prefix, db := twoProcesses(t)
	sub, err := here.Subscribe("q")
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	listening(t, here, 1)
	listenPID := func() int {
		t.Helper()
		var pid int
		for end := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			err := db.QueryRowContext(ctx, "SELECT pid FROM pg_stat_activity WHERE query = $1", `LISTEN "`+prefix+`items"`).Scan(&pid)
			if err == nil {
				return pid
			}
			if err != sql.ErrNoRows || time.Now().After(end) {
				t.Fatalf("the listening session: %v", err)
			}
		}
	}
	old := listenPID()
	var ok bool
	if err := db.QueryRowContext(ctx, "SELECT pg_terminate_backend($1)", old).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_terminate_backend(%d): %v, %v", old, ok, err)
	}
	listening(t, here, 2)
	if pid := listenPID(); pid == old {
		t.Fatalf("still listening on the terminated session %d", pid)
	}
	wokenWithin(sub, time.Second) // listening again wakes every subscriber once
	if _, err := there.Enqueue(ctx, core.ItemSpec{Queue: "q", Kind: "k"}); err != nil {
		t.Fatal(err)
	}
	if !wokenWithin(sub, 10*time.Second) {
		t.Fatal("after reconnecting, another store's Enqueue did not wake the subscriber within 10 s")
	}
}

// TestNotify_WakesIdleWorkerOfAnotherProcess checks that a worker polling
// hourly runs an item another process enqueued: only NOTIFY can have
// told it.
func TestNotify_WakesIdleWorkerOfAnotherProcess(t *testing.T) {
	t.Parallel()
	ctx, here, there, _, _ := twoProcesses(t)
	started := make(chan uuid.UUID, 4)
	w, err := worker.New(here, worker.Config{
		Queues:            map[string]worker.QueueConfig{"q": {MaxWorkers: 2}},
		PollInterval:      time.Hour,
		HeartbeatInterval: 400 * time.Millisecond,
		StaleAfter:        3 * time.Second,
		ReapInterval:      -1,
	})
	if err != nil {
		t.Fatal(err)
	}
	w.HandleFunc("k", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		started <- job.ID()
		return nil
	})
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stoptest.Stop(t, w.Stop, 10*time.Second) }()
	listening(t, here, 1)
	time.Sleep(100 * time.Millisecond) // the worker's first claims found nothing
	out, err := there.Enqueue(ctx, core.ItemSpec{Queue: "q", Kind: "k"})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-started:
		if id != out[0].ID {
			t.Fatalf("started %s, want %s", id, out[0].ID)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the worker polling hourly did not run another process's item within 20 s")
	}
}
