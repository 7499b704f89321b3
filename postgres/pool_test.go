package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/testkit/testdb"
	"github.com/plenumdb/plenum/postgres"
)

// TestOpen_BoundsThePool checks, under a role the server refuses past
// dialect.DefaultMaxOpenConns sessions, that Open's pool stays within that
// bound: it opens that many connections and makes a caller wait for more,
// and four times as many queries at once all succeed, waiting their turn,
// where an unbounded pool would open a session each and see the server
// refuse the ones past the limit (SQLSTATE 53300).
func TestOpen_BoundsThePool(t *testing.T) {
	t.Parallel()
	limit := dialect.DefaultMaxOpenConns
	db := testdb.CheckOpenBound(t, postgres.Open, testdb.LimitedRole(t, conformance.DSN(t, "postgres"), limit, ""))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 4*limit)
	for range 4 * limit {
		wg.Go(func() {
			_, err := db.ExecContext(ctx, "SELECT pg_sleep(0.5)")
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("%d queries at once on a pool of %d: %v", 4*limit, limit, err)
		}
	}
	if s := db.Stats(); s.OpenConnections > limit {
		t.Fatalf("%d connections open, past the bound of %d", s.OpenConnections, limit)
	}
}
