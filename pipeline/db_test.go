package pipeline_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/pipeline/pipelinesuite"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/sqlite"
)

// databases are SQLite in a temp dir, and the PostgreSQL and MySQL/MariaDB
// servers the environment names (conformance's harness: a skip, or a
// failure where PLENUM_REQUIRE lists the database).
var databases = []struct {
	name string
	d    dialect.Dialect
	open func(t testing.TB) *sql.DB
}{
	{"sqlite", sqlite.Dialect(), func(t testing.TB) *sql.DB {
		return opened(t)(sqlite.Open(filepath.Join(t.TempDir(), "pipeline.db")))
	}},
	{"postgres", postgres.Dialect(), func(t testing.TB) *sql.DB {
		return opened(t)(postgres.Open(conformance.DSN(t, "postgres")))
	}},
	{"mysql", mysql.Dialect(), func(t testing.TB) *sql.DB {
		return opened(t)(mysql.Open(conformance.DSN(t, "mysql")))
	}},
}

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

// TestSuite runs the pipelines' shared suite (package pipelinesuite) on
// every database.
func TestSuite(t *testing.T) {
	t.Parallel()
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			pipelinesuite.Run(t, pipelinesuite.Config{Dialect: db.d, Open: db.open})
		})
	}
}
