package workertest_test

import (
	"context"
	"database/sql"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/testkit/testdb"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
	"github.com/plenumdb/plenum/worker/workertest"
)

// slowBeats is SQLite whose heartbeats (its urgent transactions) begin
// late, as on a loaded machine, and whose clock offset may be raised to
// CockroachDB's (which raises the store's MinLease to 2 s).
type slowBeats struct {
	dialect.Dialect
	late   time.Duration
	offset time.Duration
	beats  *atomic.Int64 // late heartbeats begun
}

func (s slowBeats) Capabilities() dialect.Capabilities {
	c := s.Dialect.Capabilities()
	c.MaxClockOffset = max(c.MaxClockOffset, s.offset)
	return c
}

func (s slowBeats) Begin(ctx context.Context, db *sql.DB, opts dialect.TxOptions) (dialect.Tx, error) {
	if opts.Urgent && s.late > 0 {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(s.late):
		}
		s.beats.Add(1)
	}
	return s.Dialect.Begin(ctx, db, opts)
}

// A handler runs to its end while its worker's heartbeats come seconds
// late, as on a loaded machine: Run's worker is not stopped as lost.
func TestRun_LateHeartbeats(t *testing.T) {
	t.Parallel()
	var beats atomic.Int64
	store := testdb.SQLiteStore(t, slowBeats{Dialect: sqlite.Dialect(), late: 3 * time.Second, beats: &beats})
	wait := func(ctx context.Context, job *worker.Job[args]) error {
		// Until two late heartbeats have begun: the worker went seconds
		// without one.
		for beats.Load() < 2 {
			select {
			case <-ctx.Done():
				return context.Cause(ctx)
			case <-time.After(10 * time.Millisecond):
			}
		}
		return job.SetResult(job.Args.N)
	}
	res := workertest.Run(t, wait, args{N: 7}, workertest.Options{Store: store})
	if res.State != core.StateCompleted {
		t.Fatalf("behind late heartbeats: %s (%s), %v; want completed", res.State, res.Outcome, res.Err)
	}
}

// Run works on a store whose clock offset is CockroachDB's (500 ms, so a
// MinLease of 2 s and a StaleAfter of 4 s at least), and with a kind
// Timeout shorter than its default StaleAfter.
func TestRun_CockroachsMinLeaseAndShortTimeouts(t *testing.T) {
	t.Parallel()
	store := testdb.SQLiteStore(t, slowBeats{Dialect: sqlite.Dialect(), offset: 500 * time.Millisecond})
	if store.MinLease() != 2*time.Second {
		t.Fatalf("MinLease %v, want CockroachDB's 2 s", store.MinLease())
	}
	for _, timeout := range []time.Duration{0, 5 * time.Second} {
		res := workertest.Run(t, double, args{N: 4}, workertest.Options{Store: store, KindConfig: worker.KindConfig{Timeout: timeout}})
		if res.State != core.StateCompleted {
			t.Errorf("Timeout %v: %s (%s), %v; want completed", timeout, res.State, res.Outcome, res.Err)
		}
	}
	res := workertest.Run(t, double, args{N: 4}, workertest.Options{KindConfig: worker.KindConfig{Timeout: 3 * time.Second}})
	if res.State != core.StateCompleted {
		t.Errorf("Timeout 3s on SQLite: %s (%s), %v; want completed", res.State, res.Outcome, res.Err)
	}
}
