package mysql_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/mysql"
)

// repeatableRead is the dialect beginning its transactions at the servers'
// default isolation level instead of READ COMMITTED, for comparison.
type repeatableRead struct{ *countingDialect }

func (repeatableRead) Begin(ctx context.Context, db *sql.DB, opts dialect.TxOptions) (dialect.Tx, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: opts.ReadOnly})
	if err != nil {
		return nil, err
	}
	return tx, nil
}

// Producers enqueue while claimers claim and complete, on one queue: every
// item is done and no error reaches a caller. The deadlocks and lock waits
// met (and retried) are logged.
func TestContention_ProducersAndClaimers(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	rc := &countingDialect{wrapped: wrapped{mysql.Dialect()}}
	items, failures, took := contend(t, db, rc)
	if failures > 0 || items != producers*batches*batch {
		t.Errorf("%d items done, %d operations failed; want %d done, none failed", items, failures, producers*batches*batch)
	}
	deadlocks, waits := rc.counts()
	t.Logf("READ COMMITTED: %d items produced and completed in %v; retried %d deadlocks, %d lock wait timeouts",
		items, took.Round(time.Millisecond), deadlocks, waits)
}

// compareEnv, when set, runs TestContention_RepeatableReadForComparison.
const compareEnv = "PLENUM_MYSQL_COMPARE"

// The same workload at REPEATABLE READ, the servers' default, for
// comparison only: it asserts nothing and takes several times as long, so
// it runs only when compareEnv is set.
func TestContention_RepeatableReadForComparison(t *testing.T) {
	t.Parallel()
	if os.Getenv(compareEnv) == "" {
		t.Skipf("a comparison, not a guarantee: set %s=1 to run it", compareEnv)
	}
	db := openDB(t)
	rr := repeatableRead{&countingDialect{wrapped: wrapped{mysql.Dialect()}}}
	items, failures, took := contend(t, db, rr)
	deadlocks, waits := rr.counts()
	t.Logf("REPEATABLE READ: %d items in %v; retried %d deadlocks, %d lock wait timeouts; %d operations failed",
		items, took.Round(time.Millisecond), deadlocks, waits, failures)
}

// The workload of contend.
const producers, batches, batch, claimers = 4, 100, 5, 8

// contend runs producers (batches of batch items each) and claimers
// (batches of up to 10, completed at once) on fresh tables, and returns the
// items completed, the operations that failed, and the time taken.
func contend(t *testing.T, db *sql.DB, d dialect.Dialect) (done int64, failures int64, took time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	p := newPrefix(t, db)
	s, err := core.Open(ctx, db, d, core.Options{Prefix: p, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg        sync.WaitGroup
		completed atomic.Int64
		failed    atomic.Int64
		producing atomic.Int64
	)
	producing.Store(producers)
	start := time.Now()
	for w := range producers {
		wg.Go(func() {
			defer producing.Add(-1)
			for b := range batches {
				specs := make([]core.ItemSpec, batch)
				for i := range specs {
					specs[i] = core.ItemSpec{Queue: "contend", Priority: (b + i) % 3, Payload: json.RawMessage(fmt.Sprintf(`{"w":%d,"b":%d}`, w, b))}
				}
				if _, err := s.Enqueue(ctx, specs...); err != nil {
					failed.Add(1)
					t.Logf("producer %d: %v", w, err)
					continue
				}
			}
		})
	}
	for w := range claimers {
		wg.Go(func() {
			owner, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{Host: "contend"})
			if err != nil {
				failed.Add(1)
				return
			}
			for ctx.Err() == nil {
				cs, err := s.Claim(ctx, core.ClaimParams{Queue: "contend", Owner: owner, Limit: 10, Lease: time.Minute})
				if err != nil {
					failed.Add(1)
					t.Logf("claimer %d: %v", w, err)
					continue
				}
				if len(cs) == 0 {
					// Every producer has committed its last batch: all is taken.
					if producing.Load() == 0 {
						return
					}
					time.Sleep(time.Millisecond)
					continue
				}
				comps := make([]core.Completion, len(cs))
				for i, c := range cs {
					comps[i] = core.Completion{Claim: c}
				}
				lost, err := s.CompleteMany(ctx, comps)
				if err != nil || len(lost) > 0 {
					failed.Add(1)
					t.Logf("claimer %d: complete: lost %d, %v", w, len(lost), err)
					continue
				}
				completed.Add(int64(len(cs)))
			}
		})
	}
	wg.Wait()
	return completed.Load(), failed.Load(), time.Since(start)
}
