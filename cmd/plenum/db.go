package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/plenumdb/plenum/dialect"
	_ "github.com/plenumdb/plenum/dialect/builtin" // every dialect the module ships
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/sqlite"
)

// openable lists the dialects this binary can open, sorted: every
// registered one.
func openable() []string { return dialect.Names() }

// lookupDialect returns the registered dialect called name; its errors
// name --dialect.
func lookupDialect(name string) (dialect.Dialect, error) {
	r, err := lookupRegistration(name)
	return r.Dialect, err
}

// lookupRegistration returns the registration of the dialect called name;
// its errors name --dialect.
func lookupRegistration(name string) (dialect.Registration, error) {
	known := strings.Join(dialect.Names(), ", ")
	if name == "" {
		return dialect.Registration{}, usagef("missing --dialect (known: %s)", known)
	}
	r, err := dialect.Registered(name)
	if err != nil {
		return dialect.Registration{}, usagef("--dialect: unknown dialect %q (known: %s)", name, known)
	}
	return r, nil
}

// openDialect opens the database dsn of the dialect called name. Every
// error says which flag is at fault: --dialect, or --dsn (a DSN missing,
// malformed, refused or unreachable, in the dialect's own words).
func openDialect(name, dsn string) (*sql.DB, dialect.Dialect, error) {
	r, err := lookupRegistration(name)
	if err != nil {
		return nil, nil, err
	}
	if strings.TrimSpace(dsn) == "" {
		return nil, nil, missingDSN(r)
	}
	db, err := r.Open(dsn)
	if err != nil {
		return nil, nil, dsnError(err)
	}
	if err := checkSettings(db, r.Dialect); err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, r.Dialect, nil
}

// checkTimeout bounds the dialect's Check at open.
const checkTimeout = 30 * time.Second

// checkSettings runs the dialect's Check on a database just opened, so that
// a setting the DSN lacks (or a server setting it meets) is named as the
// fault of --dsn, before any command does work.
func checkSettings(db *sql.DB, d dialect.Dialect) error {
	ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
	defer cancel()
	if err := d.Check(ctx, db); err != nil {
		return dsnError(fmt.Errorf("the %s database cannot be used as it is: %w", d.Name(), err))
	}
	return nil
}

// dsnError names --dsn in an error of a dialect's Open.
func dsnError(err error) error { return fmt.Errorf("--dsn: %w", err) }

// missingDSN is the usage error for a dialect given no DSN.
func missingDSN(r dialect.Registration) error {
	what := "a " + r.Dialect.Name() + " DSN"
	if r.DSN.File {
		what = "a database file path"
	}
	return usagef("missing --dsn: %s needs %s, e.g. --dsn '%s'", r.Dialect.Name(), what, r.DSN.Example)
}

// dsnOrDB reconciles --dsn and --db for the dialect r: --db is another
// spelling of --dsn where the DSN is a file path, and only there. It
// returns "" only for a file dialect given neither.
func dsnOrDB(r dialect.Registration, dsn, db string) (string, error) {
	name := r.Dialect.Name()
	switch {
	case db != "" && !r.DSN.File:
		return "", usagef("--db names a database file; for %s give --dsn (e.g. --dsn '%s')", name, r.DSN.Example)
	case db != "" && dsn != "" && db != dsn:
		return "", usagef("--db %q and --dsn %q name different databases: give one", db, dsn)
	case db != "":
		return db, nil
	case dsn == "" && !r.DSN.File:
		return "", missingDSN(r)
	}
	return dsn, nil
}

// openExisting opens the database file at path with r, a dialect whose
// DSNs are file paths, when the file exists already: commands that only
// read should not leave an empty database behind a typo.
func openExisting(r dialect.Registration, path string) (*sql.DB, error) {
	if path == "" {
		return nil, usagef("missing --db (a database file path)")
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
	if err := checkSettings(db, r.Dialect); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
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
