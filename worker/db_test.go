package worker_test

import (
	"testing"
	"time"

	"github.com/plenumdb/plenum/internal/testkit/testdb"
	"github.com/plenumdb/plenum/worker"
	"github.com/plenumdb/plenum/worker/workersuite"
)

// databases are SQLite, PostgreSQL and MySQL/MariaDB (package testdb).
var databases = testdb.All("worker.db")

// TestSuite runs the runtime's shared suite (package workersuite) on every
// database; the cockroach package runs it on its PostgreSQL stand-in.
func TestSuite(t *testing.T) {
	t.Parallel()
	for _, dbase := range databases {
		t.Run(dbase.Name, func(t *testing.T) {
			t.Parallel()
			workersuite.Run(t, workersuite.Config{Dialect: dbase.Dialect, Open: dbase.Open})
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

// testWait bounds a test's waits: generous, the machine may be loaded.
const testWait = time.Minute
