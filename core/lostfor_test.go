package core_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/testkit/testdb"
	"github.com/plenumdb/plenum/sqlite"
)

// unanswered is SQLite whose transactions, while down is set, fail to
// begin as a connection lost after a wait: a server cut off by the
// network, each try bounded by the dialect's timeouts.
type unanswered struct {
	dialect.Dialect
	down   *atomic.Bool
	begins *atomic.Int64
}

func (u unanswered) Begin(ctx context.Context, db *sql.DB, opts dialect.TxOptions) (dialect.Tx, error) {
	if u.down.Load() {
		u.begins.Add(1)
		<-time.After(20 * time.Millisecond) // the dialect's bound, shortened
		return nil, driver.ErrBadConn
	}
	return u.Dialect.Begin(ctx, db, opts)
}

// TestRetry_LostConnectionStopsAfterMaxLostFor checks that a lost
// connection is retried for MaxLostFor, not for MaxAttempts tries each as
// long as the dialect's bound on a half-open connection.
func TestRetry_LostConnectionStopsAfterMaxLostFor(t *testing.T) {
	t.Parallel()
	var down atomic.Bool
	var begins atomic.Int64
	d := unanswered{sqlite.Dialect(), &down, &begins}
	store := testdb.SQLiteStore(t, d)
	store2, err := core.Open(t.Context(), store.DB(), d, core.Options{Retry: core.RetryPolicy{MaxAttempts: 1000, BaseDelay: time.Microsecond, MaxDelay: time.Microsecond, MaxLostFor: 100 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	down.Store(true)
	_, err = store2.Enqueue(context.Background(), core.ItemSpec{Queue: "q", Kind: "k"})
	if !errors.Is(err, driver.ErrBadConn) {
		t.Fatalf("err = %v, want the lost connection", err)
	}
	// 100 ms of tries of 20 ms each: about 5, far from the 1,000 allowed.
	if n := begins.Load(); n > 50 {
		t.Fatalf("%d tries of a lost connection, want those of MaxLostFor alone", n)
	}
}
