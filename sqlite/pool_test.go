package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/plenumdb/plenum/internal/testkit/testdb"
	"github.com/plenumdb/plenum/sqlite"
)

// TestOpen_BoundsThePool checks that Open's pool opens at most
// dialect.DefaultMaxOpenConns connections (each a file handle), and makes
// a caller wait for more.
func TestOpen_BoundsThePool(t *testing.T) {
	t.Parallel()
	testdb.CheckOpenBound(t, sqlite.Open, filepath.Join(t.TempDir(), "pool.db"))
}
