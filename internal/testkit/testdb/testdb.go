// Package testdb is the list of databases that the tests of the packages
// built on core run on: SQLite in a temporary directory, and the
// PostgreSQL and MySQL/MariaDB servers the environment names, through
// conformance's harness (a skip, or a failure where PLENUM_REQUIRE lists
// the database).
package testdb

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/sqlite"
)

// Database is one database a test runs on.
type Database struct {
	// Name names the database in subtests: "sqlite", "postgres", "mysql".
	Name    string
	Dialect dialect.Dialect
	// Open returns a new handle, closed when the test ends.
	Open func(t testing.TB) *sql.DB
}

// All returns SQLite first (a file named file in the test's temporary
// directory), then PostgreSQL and MySQL/MariaDB.
func All(file string) []Database {
	return []Database{
		{"sqlite", sqlite.Dialect(), func(t testing.TB) *sql.DB {
			return opened(t)(sqlite.Open(filepath.Join(t.TempDir(), file)))
		}},
		{"postgres", postgres.Dialect(), func(t testing.TB) *sql.DB {
			return opened(t)(postgres.Open(conformance.DSN(t, "postgres")))
		}},
		{"mysql", mysql.Dialect(), func(t testing.TB) *sql.DB {
			return opened(t)(mysql.Open(conformance.DSN(t, "mysql")))
		}},
	}
}

// opened fails the test on an open error and closes the handle at its end.
func opened(t testing.TB) func(*sql.DB, error) *sql.DB {
	return func(db *sql.DB, err error) *sql.DB {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
}
