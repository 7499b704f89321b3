package oracle_test

import (
	"testing"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/oracle"
	"github.com/plenumdb/plenum/worker/workersuite"
)

// TestWorkerSuite runs the worker runtime's shared suite (every outcome,
// deadlines, cancellation, graceful shutdown, a lost owner, fenced
// effects, batches, retention, the hooks' events) on Oracle, where
// PLENUM_ORACLE_DSN names a server. It has never run here.
func TestWorkerSuite(t *testing.T) {
	dsn := harness.DSN(t)
	workersuite.Run(t, workersuite.Config{Dialect: oracle.Dialect(), Open: conformance.Opener(oracle.DriverName, dsn)})
}
