package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/testdb"
	"github.com/plenumdb/plenum/sqlite"
)

// TestOpen_BoundsThePool checks that Open's pool opens at most
// dialect.DefaultMaxOpenConns connections (each a file handle), and makes
// a caller wait for more.
func TestOpen_BoundsThePool(t *testing.T) {
	t.Parallel()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "pool.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	testdb.CheckPoolBound(t, db, dialect.DefaultMaxOpenConns)
}
