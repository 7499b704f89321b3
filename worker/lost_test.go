package worker_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/testkit/stoptest"
	"github.com/plenumdb/plenum/internal/testkit/testdb"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// unreachable is SQLite whose transactions fail to begin while down is
// set: a database the worker cannot reach, though nobody reaped it.
type unreachable struct {
	dialect.Dialect
	down *atomic.Bool
}

var errDown = errors.New("database unreachable")

func (u unreachable) Begin(ctx context.Context, db *sql.DB, opts dialect.TxOptions) (dialect.Tx, error) {
	if u.down.Load() {
		return nil, errDown
	}
	return u.Dialect.Begin(ctx, db, opts)
}

// TestWorker_StopsWithoutHeartbeat checks that a worker whose heartbeats
// fail (the database unreachable, the owner not reaped) stops claiming,
// cancels its handlers and stops by itself once StaleAfter minus two
// heartbeat intervals passed without a heartbeat: before a reaper could
// count it dead and hand its claims to others.
func TestWorker_StopsWithoutHeartbeat(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var down atomic.Bool
	store := testdb.SQLiteStore(t, unreachable{sqlite.Dialect(), &down})
	if _, err := store.Enqueue(ctx, core.ItemSpec{Queue: "q", Kind: "block"}); err != nil {
		t.Fatal(err)
	}
	cfg := fast(map[string]int{"q": 1})
	cfg.ReapInterval = -1
	w, err := worker.New(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	cause := make(chan error, 1)
	w.HandleFunc("block", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		close(started)
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return ctx.Err()
	})
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	stoptest.Await(t, started, testWait, "start of the handler")
	down.Store(true)
	at := time.Now()
	select {
	case <-w.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the worker runs on without a heartbeat")
	}
	took := time.Since(at)
	// Its last heartbeat succeeded at most one interval before the outage.
	limit := cfg.StaleAfter - 2*cfg.HeartbeatInterval
	if took < limit-cfg.HeartbeatInterval || took > cfg.StaleAfter {
		t.Errorf("stopped %v after the outage, want between %v and StaleAfter (%v)", took, limit-cfg.HeartbeatInterval, cfg.StaleAfter)
	}
	if err := w.Err(); !errors.Is(err, worker.ErrLost) || errors.Is(err, core.ErrOwnerLost) {
		t.Errorf("Err = %v, want ErrLost (not reaped: no heartbeat succeeded)", err)
	}
	if c := <-cause; !errors.Is(c, worker.ErrLost) {
		t.Errorf("handler context ended with %v, want ErrLost", c)
	}
}
