package cmdline

import (
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// Database is the set of flags that name a database, the same on every
// command: --dialect, --dsn, --db, --dsn-env, --dsn-file and --prefix.
// A DSN may hold a password, so besides --dsn it may come from an
// environment variable (--dsn-env NAME) or a file (--dsn-file PATH), where
// other users of the machine cannot read it in the process list.
type Database struct {
	// Dialect is a registered dialect's name or alias; empty lets the
	// DSN's form say which (a postgres:// URL is PostgreSQL's), or --db
	// say SQLite.
	Dialect string
	// DSN is the database; for SQLite a file path.
	DSN string
	// DB is an SQLite file: another spelling of --dsn for the dialects
	// whose DSNs are file paths, and only for those.
	DB string
	// DSNEnv names an environment variable that holds the DSN.
	DSNEnv string
	// DSNFile names a file whose first line is the DSN.
	DSNFile string
	// Prefix is the table name prefix.
	Prefix string
}

// Register adds the flags that name the database to fs: every one but
// --prefix (RegisterPrefix). defaultDialect is --dialect's default ("" for
// none); what says what the command does with the database, for --dsn's
// help ("to read", "to test").
func (f *Database) Register(fs *flag.FlagSet, defaultDialect, what string) {
	f.Dialect = defaultDialect
	dialects := "database dialect: " + strings.Join(Openable(), ", ")
	if defaultDialect == "" {
		dialects += " (default: the one whose DSNs have --dsn's form, or sqlite for --db)"
	}
	fs.StringVar(&f.Dialect, "dialect", defaultDialect, dialects)
	fs.StringVar(&f.DSN, "dsn", "", "`DSN` of the database "+what+" (for sqlite, a file path: the same as --db)")
	fs.StringVar(&f.DB, "db", "", "SQLite database `file`")
	fs.StringVar(&f.DSNEnv, "dsn-env", "", "the environment `variable` holding the DSN (keeps a password out of the process list)")
	fs.StringVar(&f.DSNFile, "dsn-file", "", "a `file` whose first line is the DSN (keeps a password out of the process list)")
}

// RegisterPrefix adds --prefix to fs, for the commands that work on
// existing tables; its default is migrations.DefaultPrefix.
func (f *Database) RegisterPrefix(fs *flag.FlagSet) {
	f.Prefix = migrations.DefaultPrefix
	fs.StringVar(&f.Prefix, "prefix", f.Prefix, "table name prefix")
}

// Open opens the database the flags name, with --dialect required unless
// the DSN's form or --db says which; its errors name the flag at fault.
func (f Database) Open() (*sql.DB, dialect.Dialect, error) {
	r, dsn, err := f.Resolve("")
	if err != nil {
		return nil, nil, err
	}
	return OpenDialect(r.Dialect.Name(), dsn)
}

// CheckPrefix refuses a --prefix that is not a safe identifier.
func (f Database) CheckPrefix() error {
	if err := migrations.ValidatePrefix(f.Prefix); err != nil {
		return Usagef("--prefix: %v", err)
	}
	return nil
}

// Resolve returns the dialect and the DSN the flags name. Without
// --dialect, --db names an SQLite file, a DSN's form names the one linked
// dialect with DSNs of that form, and with neither fallback is used (""
// refuses). The DSN is "" only for a dialect whose DSNs are file paths
// given none: the command decides (a temporary file, or a refusal).
func (f Database) Resolve(fallback string) (dialect.Registration, string, error) {
	dsn, err := f.dsn()
	if err != nil {
		return dialect.Registration{}, "", err
	}
	name := f.Dialect
	switch {
	case name != "":
	case f.DB != "" && dsn == "":
		name = "sqlite"
	case dsn != "":
		r, err := dialect.ForDSN(dsn)
		if err != nil {
			return dialect.Registration{}, "", Usagef("--dsn: its form names no one dialect (%v): give --dialect (known: %s)",
				strings.TrimPrefix(err.Error(), "dialect: "), strings.Join(Openable(), ", "))
		}
		name = r.Dialect.Name()
	default:
		name = fallback
	}
	r, err := LookupRegistration(name)
	if err != nil {
		return dialect.Registration{}, "", err
	}
	dsn, err = DSNOrDB(r, dsn, f.DB)
	return r, dsn, err
}

// dsn returns the DSN of --dsn, --dsn-env or --dsn-file, of which at most
// one may be given, or "" for none.
func (f Database) dsn() (string, error) {
	given := 0
	for _, v := range []string{f.DSN, f.DSNEnv, f.DSNFile} {
		if v != "" {
			given++
		}
	}
	if given > 1 {
		return "", Usagef("--dsn, --dsn-env and --dsn-file each name the DSN: give one")
	}
	switch {
	case f.DSNEnv != "":
		v, ok := os.LookupEnv(f.DSNEnv)
		if !ok || strings.TrimSpace(v) == "" {
			return "", Usagef("--dsn-env %s: the variable is unset or empty", f.DSNEnv)
		}
		return strings.TrimSpace(v), nil
	case f.DSNFile != "":
		b, err := os.ReadFile(f.DSNFile)
		if errors.Is(err, os.ErrNotExist) {
			return "", Usagef("--dsn-file %s: no such file", f.DSNFile)
		}
		if err != nil {
			return "", fmt.Errorf("--dsn-file: %w", err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		if strings.TrimSpace(line) == "" {
			return "", Usagef("--dsn-file %s: its first line is empty", f.DSNFile)
		}
		return strings.TrimSpace(line), nil
	}
	return f.DSN, nil
}
