package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/plenumdb/plenum/internal/testkit/upgradetest"
	"github.com/plenumdb/plenum/sqlite"
)

// The schema upgrade from version 1 with data, down and up again,
// concurrent migrators, and failures half way (which SQLite's
// transactional DDL rolls back whole).
func TestUpgrade(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "upgrade.db")
	upgradetest.Run(t, upgradetest.Config{
		Dialect: sqlite.Dialect(),
		Open: func(t testing.TB) *sql.DB {
			db, err := sqlite.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		},
	})
}
