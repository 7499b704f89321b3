package testdb

import (
	"path/filepath"
	"testing"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/sqlite"
)

// SQLiteStore opens a store, migrated, on a fresh SQLite file through d:
// SQLite's dialect, or a wrapping of it that fakes a database's trouble.
// The database is closed when t ends.
func SQLiteStore(t testing.TB, d dialect.Dialect) *core.Store {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "store.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	store, err := core.Open(t.Context(), db, d, core.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	return store
}
