package worker_test

import (
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
	"github.com/plenumdb/plenum/worker/workersuite"
)

// database is one database the runtime's tests run on.
type database struct {
	name string
	d    dialect.Dialect
	open func(t testing.TB) *sql.DB
}

// databases are SQLite in a temp dir, and the PostgreSQL and MySQL/MariaDB
// servers the environment names (conformance's harness: a skip, or a
// failure where PLENUM_REQUIRE lists the database).
var databases = []database{
	{"sqlite", sqlite.Dialect(), func(t testing.TB) *sql.DB {
		return opened(t)(sqlite.Open(filepath.Join(t.TempDir(), "worker.db")))
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

// TestSuite runs the runtime's shared suite (package workersuite) on every
// database; the cockroach package runs it on its PostgreSQL stand-in.
func TestSuite(t *testing.T) {
	t.Parallel()
	for _, dbase := range databases {
		t.Run(dbase.name, func(t *testing.T) {
			t.Parallel()
			workersuite.Run(t, workersuite.Config{Dialect: dbase.d, Open: dbase.open})
		})
	}
}

// fast are settings that make a test's worker quick: polls of 50 ms,
// heartbeats every 400 ms, stale after 3 s.
func fast(queues map[string]int) worker.Config {
	cfg := worker.Config{
		Queues:            map[string]worker.QueueConfig{},
		PollInterval:      50 * time.Millisecond,
		HeartbeatInterval: 400 * time.Millisecond,
		StaleAfter:        3 * time.Second,
		ReapInterval:      time.Second,
	}
	for q, n := range queues {
		cfg.Queues[q] = worker.QueueConfig{MaxWorkers: n}
	}
	return cfg
}
