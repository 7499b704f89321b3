package worker_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/testkit/testdb"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// TestWorker_HeartbeatsBehindBusyWriters checks that on SQLite, whose
// writers of one process take turns, a worker keeps heartbeating while the
// process's other writers keep a queue of seconds: its heartbeat goes
// before them, waiting for one transaction at most, so it neither stops
// itself as lost nor looks dead to a reaper. The queue here (20 writers
// holding their turn 200 ms each) is longer than StaleAfter less two
// heartbeat intervals: a heartbeat at its end would stop the worker.
func TestWorker_HeartbeatsBehindBusyWriters(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	store := testdb.SQLiteStore(t, sqlite.Dialect())
	cfg := fast(map[string]int{"q": 1})
	cfg.ReapInterval = -1
	w, err := worker.New(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Stop(context.Background()) }()

	busy, quiet := context.WithCancel(ctx)
	var writers sync.WaitGroup
	defer writers.Wait()
	defer quiet()
	for range 20 {
		writers.Go(func() {
			for busy.Err() == nil {
				tx, err := sqlite.Dialect().Begin(busy, store.DB(), dialect.TxOptions{})
				if err != nil {
					continue // the queue's bound, or the end of the test
				}
				select {
				case <-busy.Done():
				case <-time.After(200 * time.Millisecond):
				}
				_ = tx.Rollback()
			}
		})
	}

	// Heartbeats for longer than StaleAfter, all behind the busy writers.
	seen := map[time.Time]bool{}
	for len(seen) < 12 {
		select {
		case <-w.Done():
			t.Fatalf("the worker stopped after %d heartbeats behind the busy writers: %v", len(seen), w.Err())
		case <-ctx.Done():
			t.Fatalf("%d heartbeats behind the busy writers, want 12", len(seen))
		case <-time.After(50 * time.Millisecond):
		}
		owners, err := browse.New(store).Owners(ctx, browse.OwnersParams{})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range owners {
			if o.ID == w.Owner() {
				seen[o.LastHeartbeatAt] = true
			}
		}
	}
}
