package core_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/sqlite"
)

// opened is a store on a SQLite file of its own, migrated, with an owner
// registered to claim with.
type opened struct {
	store *core.Store
	db    *sql.DB
	owner uuid.UUID
}

// openStore opens a store with opts (Migrate set) through d, SQLite's
// dialect or a wrapping of it that watches or bends what the core asks
// for, on a fresh file closed when t ends, and registers an owner on it.
func openStore(t *testing.T, d dialect.Dialect, opts core.Options) opened {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "plenum.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	opts.Migrate = true
	s, err := core.Open(t.Context(), db, d, opts)
	if err != nil {
		t.Fatal(err)
	}
	owner, err := s.RegisterOwner(t.Context(), core.RegisterOwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	return opened{store: s, db: db, owner: owner}
}
