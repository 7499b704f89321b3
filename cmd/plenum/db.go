package main

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/plenumdb/plenum/dialect"
	_ "github.com/plenumdb/plenum/dialect/builtin" // every dialect the module ships
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/sqlite"
)

// lookupDialect returns the registered dialect called name; its errors
// name --dialect.
func lookupDialect(name string) (dialect.Dialect, error) {
	r, err := cmdline.LookupRegistration(name)
	return r.Dialect, err
}

// openExisting opens the database file at path with r, a dialect whose
// DSNs are file paths, when the file exists already: commands that only
// read should not leave an empty database behind a typo.
func openExisting(r dialect.Registration, path string) (*sql.DB, error) {
	if path == "" {
		return nil, cmdline.Usagef("missing --db (a database file path)")
	}
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("--db: no database file at %s", path)
	}
	if err != nil {
		return nil, fmt.Errorf("--db: %w", err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("--db: %s is a directory, not a database file", path)
	}
	db, err := r.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--db: %w", err)
	}
	if err := cmdline.CheckSettings(db, r.Dialect); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// checkPrefix validates a --prefix flag.
func checkPrefix(prefix string) error {
	if err := migrations.ValidatePrefix(prefix); err != nil {
		return cmdline.Usagef("--prefix: %v", err)
	}
	return nil
}

// openScratch opens the SQLite file at path, or, when path is empty, a new
// file named cmd.db in a new temporary directory. close closes the database
// and removes that directory unless keep is set.
func openScratch(cmd, path string, keep bool) (db *sql.DB, at string, close func(), err error) {
	dir := ""
	if path == "" {
		if dir, err = os.MkdirTemp("", "plenum-"+cmd+"-"); err != nil {
			return nil, "", nil, fmt.Errorf("%s: temporary directory: %w", cmd, err)
		}
		path = filepath.Join(dir, cmd+".db")
	}
	if db, err = sqlite.Open(path); err != nil {
		if dir != "" {
			os.RemoveAll(dir)
		}
		return nil, "", nil, fmt.Errorf("%s: %w", cmd, err)
	}
	return db, path, func() {
		db.Close()
		if dir != "" && !keep {
			os.RemoveAll(dir)
		}
	}, nil
}
