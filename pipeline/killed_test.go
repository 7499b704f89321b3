package pipeline_test

import (
	"path/filepath"
	"testing"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/pipeline/pipelinesuite"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/sqlite"
)

// The killed-process tests: one top-level test per database, because the
// worker process is this test binary run again on one test.
func TestKilledWorker_SQLite(t *testing.T) {
	pipelinesuite.RunKilled(t, pipelinesuite.KilledConfig{Dialect: sqlite.Dialect(), Open: sqlite.Open, DSN: func(t *testing.T) string {
		return filepath.Join(t.TempDir(), "killed.db")
	}})
}

func TestKilledWorker_Postgres(t *testing.T) {
	pipelinesuite.RunKilled(t, pipelinesuite.KilledConfig{Dialect: postgres.Dialect(), Open: postgres.Open, DSN: func(t *testing.T) string { return conformance.DSN(t, "postgres") }})
}

func TestKilledWorker_MySQL(t *testing.T) {
	pipelinesuite.RunKilled(t, pipelinesuite.KilledConfig{Dialect: mysql.Dialect(), Open: mysql.Open, DSN: func(t *testing.T) string { return conformance.DSN(t, "mysql") }})
}

// The tests of a worker process killed while a run waits on a condition.
func TestKilledWhileWaiting_SQLite(t *testing.T) {
	pipelinesuite.RunKilledWait(t, pipelinesuite.KilledConfig{Dialect: sqlite.Dialect(), Open: sqlite.Open, DSN: func(t *testing.T) string {
		return filepath.Join(t.TempDir(), "killedwait.db")
	}})
}

func TestKilledWhileWaiting_Postgres(t *testing.T) {
	pipelinesuite.RunKilledWait(t, pipelinesuite.KilledConfig{Dialect: postgres.Dialect(), Open: postgres.Open, DSN: func(t *testing.T) string { return conformance.DSN(t, "postgres") }})
}

func TestKilledWhileWaiting_MySQL(t *testing.T) {
	pipelinesuite.RunKilledWait(t, pipelinesuite.KilledConfig{Dialect: mysql.Dialect(), Open: mysql.Open, DSN: func(t *testing.T) string { return conformance.DSN(t, "mysql") }})
}

// The tests of a worker process killed while a repetition runs.
func TestKilledWhileRepeating_SQLite(t *testing.T) {
	pipelinesuite.RunKilledRepeat(t, pipelinesuite.KilledConfig{Dialect: sqlite.Dialect(), Open: sqlite.Open, DSN: func(t *testing.T) string {
		return filepath.Join(t.TempDir(), "killedrepeat.db")
	}})
}

func TestKilledWhileRepeating_Postgres(t *testing.T) {
	pipelinesuite.RunKilledRepeat(t, pipelinesuite.KilledConfig{Dialect: postgres.Dialect(), Open: postgres.Open, DSN: func(t *testing.T) string { return conformance.DSN(t, "postgres") }})
}

func TestKilledWhileRepeating_MySQL(t *testing.T) {
	pipelinesuite.RunKilledRepeat(t, pipelinesuite.KilledConfig{Dialect: mysql.Dialect(), Open: mysql.Open, DSN: func(t *testing.T) string { return conformance.DSN(t, "mysql") }})
}

// The tests of a worker process killed inside a step's transaction after
// its write to the run's context.
func TestKilledContextWrite_SQLite(t *testing.T) {
	pipelinesuite.RunKilledContext(t, pipelinesuite.KilledConfig{Dialect: sqlite.Dialect(), Open: sqlite.Open, DSN: func(t *testing.T) string {
		return filepath.Join(t.TempDir(), "killedctx.db")
	}})
}

func TestKilledContextWrite_Postgres(t *testing.T) {
	pipelinesuite.RunKilledContext(t, pipelinesuite.KilledConfig{Dialect: postgres.Dialect(), Open: postgres.Open, DSN: func(t *testing.T) string { return conformance.DSN(t, "postgres") }})
}

func TestKilledContextWrite_MySQL(t *testing.T) {
	pipelinesuite.RunKilledContext(t, pipelinesuite.KilledConfig{Dialect: mysql.Dialect(), Open: mysql.Open, DSN: func(t *testing.T) string { return conformance.DSN(t, "mysql") }})
}
