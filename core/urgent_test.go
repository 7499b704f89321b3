package core_test

import (
	"context"
	"database/sql"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/sqlite"
)

// urgentSpy is SQLite's dialect counting the write transactions begun
// urgent and the others.
type urgentSpy struct {
	dialect.Dialect
	urgent, ordinary atomic.Int64
}

func (s *urgentSpy) Begin(ctx context.Context, db *sql.DB, opts dialect.TxOptions) (dialect.Tx, error) {
	if opts.Urgent {
		s.urgent.Add(1)
	} else if !opts.ReadOnly {
		s.ordinary.Add(1)
	}
	return s.Dialect.Begin(ctx, db, opts)
}

// A heartbeat asks the dialect for an urgent transaction, so that on
// SQLite it goes before the process's other writers waiting; the other
// writes do not, or the heartbeat would queue behind them again.
func TestHeartbeat_BeginsUrgent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	spy := &urgentSpy{Dialect: sqlite.Dialect()}
	o := openStore(t, spy, core.Options{})
	s, owner := o.store, o.owner
	if _, err := s.Enqueue(ctx, core.ItemSpec{Queue: "q"}); err != nil {
		t.Fatal(err)
	}
	cs, err := s.Claim(ctx, core.ClaimParams{Queue: "q", Owner: owner, Limit: 1, Lease: time.Minute})
	if err != nil || len(cs) != 1 {
		t.Fatalf("Claim: %d, %v", len(cs), err)
	}
	if err := s.Complete(ctx, cs[0], nil); err != nil {
		t.Fatal(err)
	}
	if n := spy.urgent.Load(); n != 0 {
		t.Fatalf("%d urgent transactions before any heartbeat, want 0", n)
	}
	ordinary := spy.ordinary.Load()
	if err := s.Heartbeat(ctx, owner); err != nil {
		t.Fatal(err)
	}
	if u, o := spy.urgent.Load(), spy.ordinary.Load()-ordinary; u != 1 || o != 0 {
		t.Fatalf("a heartbeat began %d urgent and %d ordinary transactions, want 1 and 0", u, o)
	}
}
