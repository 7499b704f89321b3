package cockroach

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/worker/workersuite"
)

// TestWorkerSuite_PostgresSerializable runs the worker runtime's shared
// suite (every outcome, deadlines, cancellation, graceful shutdown, a lost
// owner, fenced effects, batches, retention, the hooks' events) with the
// cockroach dialect on its PostgreSQL stand-in, every session
// serializable, as TestConformance_PostgresSerializable runs the
// conformance suite.
func TestWorkerSuite_PostgresSerializable(t *testing.T) {
	dsn := serializableDSN(t)
	d := newCounting(postgresCompatible(lockTableFor(t, dsn)))
	t.Run("Suite", func(suite *testing.T) {
		workersuite.Run(suite, workersuite.Config{Dialect: d, Open: conformance.Opener(DriverName, dsn), Skip: map[string]string{
			// PostgreSQL's serializable isolation tracks what each
			// transaction read (predicate locks) until every transaction
			// that overlapped it has ended: fences held open for a whole
			// StaleAfter keep that state alive, and each heartbeat's
			// update is then cancelled as the pivot of a read-write cycle
			// (40001, "Canceled on identification as a pivot, during
			// write") until the worker stops itself. CockroachDB keeps no
			// predicate locks: a heartbeat there conflicts only with
			// transactions that touch its owner's row, which no fence does.
			"HeartbeatWhileFencesHoldThePool": "the stand-in's SERIALIZABLE cancels heartbeats beside long fences as pivots of read-write cycles, which CockroachDB does not",
		}})
	})
	total, byCode := d.counts()
	t.Logf("retryable errors classified (each a transaction rolled back for a retry): %d (%s)", total, byCode)
}

// TestKilledWorker_PostgresSerializable SIGKILLs a worker process of the
// cockroach dialect, on its PostgreSQL stand-in, mid-batch and inside an
// open fence, and checks that a worker of this process finishes its items,
// each effect once, each dead claim a crash.
func TestKilledWorker_PostgresSerializable(t *testing.T) {
	lock := fmt.Sprintf("pl%08x_locks", rand.Uint32())
	workersuite.RunKilled(t, workersuite.KilledConfig{
		Dialect: newCounting(postgresCompatible(lock)),
		Open:    func(dsn string) (*sql.DB, error) { return sql.Open(DriverName, dsn) },
		DSN: func(t *testing.T) string {
			dsn := serializableDSN(t)
			dropAtEnd(t, dsn, lock)
			return dsn
		},
	})
}

// TestKilledBatchWorker_PostgresSerializable SIGKILLs a worker process of
// the cockroach dialect, on its PostgreSQL stand-in, with one batch in its
// handler and one inside the transaction of its outcomes, and checks that
// a worker of this process finishes its items, none completed twice.
func TestKilledBatchWorker_PostgresSerializable(t *testing.T) {
	lock := fmt.Sprintf("pl%08x_locks", rand.Uint32())
	workersuite.RunKilledBatch(t, workersuite.KilledConfig{
		Dialect: newCounting(postgresCompatible(lock)),
		Open:    func(dsn string) (*sql.DB, error) { return sql.Open(DriverName, dsn) },
		DSN: func(t *testing.T) string {
			dsn := serializableDSN(t)
			dropAtEnd(t, dsn, lock)
			return dsn
		},
	})
}
