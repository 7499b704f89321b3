package cmdline

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/plenumdb/plenum/dialect"
)

// Openable lists the dialects this binary can open, sorted: every
// registered one.
func Openable() []string { return dialect.Names() }

// LookupRegistration returns the registration of the dialect called name;
// its errors name --dialect.
func LookupRegistration(name string) (dialect.Registration, error) {
	known := strings.Join(dialect.Names(), ", ")
	if name == "" {
		return dialect.Registration{}, Usagef("missing --dialect (known: %s)", known)
	}
	r, err := dialect.Registered(name)
	if err != nil {
		return dialect.Registration{}, Usagef("--dialect: unknown dialect %q (known: %s)", name, known)
	}
	return r, nil
}

// OpenDialect opens the database dsn of the dialect called name. Every
// error says which flag is at fault: --dialect, or --dsn (a DSN missing,
// malformed, refused or unreachable, in the dialect's own words).
func OpenDialect(name, dsn string) (*sql.DB, dialect.Dialect, error) {
	r, err := LookupRegistration(name)
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
	if err := CheckSettings(db, r.Dialect); err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, r.Dialect, nil
}

// checkTimeout bounds the dialect's Check at open.
const checkTimeout = 30 * time.Second

// CheckSettings runs the dialect's Check on a database just opened, so that
// a setting the DSN lacks (or a server setting it meets) is named as the
// fault of --dsn, before any command does work.
func CheckSettings(db *sql.DB, d dialect.Dialect) error {
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
	return Usagef("missing --dsn: %s needs %s, e.g. --dsn '%s'", r.Dialect.Name(), what, r.DSN.Example)
}

// DSNOrDB reconciles --dsn and --db for the dialect r: --db is another
// spelling of --dsn where the DSN is a file path, and only there. It
// returns "" only for a file dialect given neither.
func DSNOrDB(r dialect.Registration, dsn, db string) (string, error) {
	name := r.Dialect.Name()
	switch {
	case db != "" && !r.DSN.File:
		return "", Usagef("--db names a database file; for %s give --dsn (e.g. --dsn '%s')", name, r.DSN.Example)
	case db != "" && dsn != "" && db != dsn:
		return "", Usagef("--db %q and --dsn %q name different databases: give one", db, dsn)
	case db != "":
		return db, nil
	case dsn == "" && !r.DSN.File:
		return "", missingDSN(r)
	}
	return dsn, nil
}
