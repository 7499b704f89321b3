package worker_test

import (
	"path/filepath"
	"testing"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker/workersuite"
)

// The killed-process tests: one top-level test per database, because the
// worker process is this test binary run again on one test.
func TestKilledWorker_SQLite(t *testing.T) {
	workersuite.RunKilled(t, workersuite.KilledConfig{Dialect: sqlite.Dialect(), Open: sqlite.Open, DSN: func(t *testing.T) string {
		return filepath.Join(t.TempDir(), "crash.db")
	}})
}

func TestKilledWorker_Postgres(t *testing.T) {
	workersuite.RunKilled(t, workersuite.KilledConfig{Dialect: postgres.Dialect(), Open: postgres.Open, DSN: func(t *testing.T) string { return conformance.DSN(t, "postgres") }})
}

func TestKilledWorker_MySQL(t *testing.T) {
	workersuite.RunKilled(t, workersuite.KilledConfig{Dialect: mysql.Dialect(), Open: mysql.Open, DSN: func(t *testing.T) string { return conformance.DSN(t, "mysql") }})
}

// The fault-kill tests: a process killed at each injection point.
func TestFaultKills_SQLite(t *testing.T) {
	workersuite.RunFaultKills(t, workersuite.KilledConfig{Dialect: sqlite.Dialect(), Open: sqlite.Open, DSN: func(t *testing.T) string {
		return filepath.Join(t.TempDir(), "faults.db")
	}})
}

func TestFaultKills_Postgres(t *testing.T) {
	workersuite.RunFaultKills(t, workersuite.KilledConfig{Dialect: postgres.Dialect(), Open: postgres.Open, DSN: func(t *testing.T) string { return conformance.DSN(t, "postgres") }})
}

func TestFaultKills_MySQL(t *testing.T) {
	workersuite.RunFaultKills(t, workersuite.KilledConfig{Dialect: mysql.Dialect(), Open: mysql.Open, DSN: func(t *testing.T) string { return conformance.DSN(t, "mysql") }})
}

// The killed batch worker tests: a process killed with one batch in its
// handler and one inside the transaction of its outcomes.
func TestKilledBatchWorker_SQLite(t *testing.T) {
	workersuite.RunKilledBatch(t, workersuite.KilledConfig{Dialect: sqlite.Dialect(), Open: sqlite.Open, DSN: func(t *testing.T) string {
		return filepath.Join(t.TempDir(), "batchcrash.db")
	}})
}

func TestKilledBatchWorker_Postgres(t *testing.T) {
	workersuite.RunKilledBatch(t, workersuite.KilledConfig{Dialect: postgres.Dialect(), Open: postgres.Open, DSN: func(t *testing.T) string { return conformance.DSN(t, "postgres") }})
}

func TestKilledBatchWorker_MySQL(t *testing.T) {
	workersuite.RunKilledBatch(t, workersuite.KilledConfig{Dialect: mysql.Dialect(), Open: mysql.Open, DSN: func(t *testing.T) string { return conformance.DSN(t, "mysql") }})
}
