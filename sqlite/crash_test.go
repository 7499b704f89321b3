package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/plenumdb/plenum/internal/testkit/crashtest"
	"github.com/plenumdb/plenum/sqlite"
)

// TestCrash_KilledWorkerProcess kills a real worker process while it holds
// claims and an open write transaction, and proves that the reaper releases
// exactly its unfinished claims as crashes, that the half-done fence left no
// effect, and that every item ends completed with exactly one effect.
func TestCrash_KilledWorkerProcess(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "crash.db")
	crashtest.Run(t, crashtest.Config{Dialect: sqlite.Dialect(), Open: sqlite.Open, DSN: dsn})
}

// TestCrash_FlowLimitSurvivesKilledWorkers kills worker processes that hold
// claims of keyed items under a concurrency limit per key: the limit holds
// throughout, every item completes once, and no slot leaks.
func TestCrash_FlowLimitSurvivesKilledWorkers(t *testing.T) {
	dsn := filepath.Join(t.TempDir(), "crashflow.db")
	crashtest.RunFlow(t, crashtest.Config{Dialect: sqlite.Dialect(), Open: sqlite.Open, DSN: dsn})
}
