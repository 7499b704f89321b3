package cockroach

import (
	"testing"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/testkit/testdb"
)

// TestOpen_BoundsThePool checks, on the PostgreSQL stand-in and under a
// role the server refuses past dialect.DefaultMaxOpenConns sessions, that
// Open's pool opens at most that many connections, and makes a caller wait
// for more.
func TestOpen_BoundsThePool(t *testing.T) {
	t.Parallel()
	testdb.CheckOpenBound(t, Open, testdb.LimitedRole(t, pgHarness.DSN(t), dialect.DefaultMaxOpenConns, ""))
}
