package oracle_test

import (
	"database/sql"
	"testing"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/oracle"
	"github.com/plenumdb/plenum/worker/workersuite"
)

// TestWorkerSuite runs the worker runtime's shared suite (every outcome,
// deadlines, cancellation, graceful shutdown, a lost owner, fenced
// effects, batches, retention, paused queues, attempt history, periodic
// ticks, the hooks' events) on Oracle, where PLENUM_ORACLE_DSN names a
// server. It has never run here.
func TestWorkerSuite(t *testing.T) {
	dsn := harness.DSN(t)
	workersuite.Run(t, workersuite.Config{Dialect: oracle.Dialect(), Open: conformance.Opener(oracle.DriverName, dsn)})
}

// TestKilledWorker SIGKILLs a worker process on Oracle mid-batch and inside
// an open fence, and checks that a worker of this process finishes its
// items, each effect once, each dead claim a crash. It runs where
// PLENUM_ORACLE_DSN names a server; it has never run here.
func TestKilledWorker(t *testing.T) {
	workersuite.RunKilled(t, workersuite.KilledConfig{
		Dialect: oracle.Dialect(),
		Open:    func(dsn string) (*sql.DB, error) { return sql.Open(oracle.DriverName, dsn) },
		DSN:     func(t *testing.T) string { return harness.DSN(t) },
	})
}
