package mysql_test

import (
	"testing"

	"github.com/plenumdb/plenum/internal/testkit/crashtest"
	"github.com/plenumdb/plenum/mysql"
)

// TestCrash_KilledWorkerProcess kills a real worker process while its fence
// holds row locks in an open transaction, and checks that the server rolls
// it back and that the reaper hands its unfinished claims to a survivor.
func TestCrash_KilledWorkerProcess(t *testing.T) {
	dsn := harnessMySQL.DSN(t)
	crashtest.Run(t, crashtest.Config{Dialect: mysql.Dialect(), Open: mysql.Open, DSN: dsn})
}

// TestCrash_FlowLimitSurvivesKilledWorkers kills worker processes that hold
// claims of keyed items under a concurrency limit per key: the limit holds
// throughout, every item completes once, and no slot leaks.
func TestCrash_FlowLimitSurvivesKilledWorkers(t *testing.T) {
	dsn := harnessMySQL.DSN(t)
	crashtest.RunFlow(t, crashtest.Config{Dialect: mysql.Dialect(), Open: mysql.Open, DSN: dsn})
}
