package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/plenumdb/plenum/cockroach"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/oracle"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/sqlite"
)

// planned are dialects Plenum will support whose packages this binary does
// not include yet: naming one gets a clearer error than "unknown". None
// at the moment.
var planned []string

// openers turn a DSN into a *sql.DB, per dialect. The dialect contract has
// no opener (applications bring their own *sql.DB), so the CLI keeps one
// per dialect package it links.
var openers = map[string]func(dsn string) (*sql.DB, error){
	cockroach.Name: cockroach.Open,
	mysql.Name:     mysql.Open,
	oracle.Name:    oracle.Open,
	postgres.Name:  postgres.Open,
	sqlite.Name:    sqlite.Open,
}

// fileDSN lists the dialects whose DSN is the path of a database file on
// this machine. For them bench takes --db as another spelling of --dsn, and
// makes a file in a new temporary directory when given neither; a server
// database has to be named.
var fileDSN = map[string]bool{
	sqlite.Name: true,
}

// checkpointer is what bench runs between two measurements where a
// database keeps work of one measurement for later (SQLite's write-ahead
// log grows until a checkpoint copies it into the database file): each side
// then starts clean instead of paying for the other's leftovers. A dialect
// may implement it itself; checkpointers supplies it for dialect packages
// that do not.
type checkpointer interface {
	Checkpoint(ctx context.Context, db *sql.DB) error
}

// checkpointers are, per dialect, the checkpointer the CLI brings for it.
// Dialects without one need nothing between measurements.
var checkpointers = map[string]checkpointer{
	sqlite.Name: sqliteWAL{},
}

// checkpointerFor returns d's checkpointer: its own if it has one, the
// CLI's for its package otherwise, or nil.
func checkpointerFor(d dialect.Dialect) checkpointer {
	if c, ok := d.(checkpointer); ok {
		return c
	}
	return checkpointers[d.Name()]
}

// sqliteWAL empties SQLite's write-ahead log into the database file.
// TRUNCATE also shrinks the log to nothing, so that the next measurement's
// writes do not start by reusing (or first checkpointing) a long log.
type sqliteWAL struct{}

// Checkpoint runs PRAGMA wal_checkpoint(TRUNCATE).
func (sqliteWAL) Checkpoint(ctx context.Context, db *sql.DB) error {
	_, err := db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	return err
}

// lookupDialect returns the registered dialect called name.
func lookupDialect(name string) (dialect.Dialect, error) {
	known := strings.Join(dialect.Names(), ", ")
	if name == "" {
		return nil, usagef("missing --dialect (known: %s)", known)
	}
	d, err := dialect.Lookup(name)
	if err != nil {
		if slices.Contains(planned, name) {
			return nil, usagef("dialect %s: not built into this binary yet (known: %s)", name, known)
		}
		return nil, &usageError{msg: err.Error()}
	}
	return d, nil
}

// openDialect opens the database dsn of the dialect called name.
func openDialect(name, dsn string) (*sql.DB, dialect.Dialect, error) {
	d, err := lookupDialect(name)
	if err != nil {
		return nil, nil, err
	}
	open, ok := openers[d.Name()]
	if !ok {
		return nil, nil, usagef("dialect %s: this binary cannot open its databases yet", d.Name())
	}
	if dsn == "" {
		return nil, nil, usagef("missing --dsn (for sqlite: a database file path)")
	}
	db, err := open(dsn)
	if err != nil {
		return nil, nil, err
	}
	return db, d, nil
}

// dsnOrDB reconciles --dsn and --db for the dialect called name: --db is
// another spelling of --dsn where the DSN is a file path, and only there.
// It returns "" only for a file dialect given neither.
func dsnOrDB(name, dsn, db string) (string, error) {
	file := fileDSN[name]
	switch {
	case db != "" && !file:
		return "", usagef("--db names a database file; for %s give --dsn", name)
	case db != "" && dsn != "" && db != dsn:
		return "", usagef("--db %q and --dsn %q name different databases: give one", db, dsn)
	case db != "":
		return db, nil
	case dsn == "" && !file:
		return "", usagef("missing --dsn: %s needs a database to work on", name)
	}
	return dsn, nil
}

// openExisting opens an SQLite file that must already exist: commands that
// only read should not leave an empty database behind a typo.
func openExisting(path string) (*sql.DB, error) {
	if path == "" {
		return nil, usagef("missing --db (a database file path)")
	}
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no database file at %s", path)
	}
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a directory, not a database file", path)
	}
	return sqlite.Open(path)
}

// checkPrefix validates a --prefix flag.
func checkPrefix(prefix string) error {
	if err := migrations.ValidatePrefix(prefix); err != nil {
		return usagef("--prefix: %v", err)
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
