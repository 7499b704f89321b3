package dialect

import "time"

// Capabilities are the facts about a database that change how the core
// shapes its statements.
type Capabilities struct {
	// SingleWriter is true when the database runs one write transaction at
	// a time (SQLite). Row locks and SKIP LOCKED then mean nothing, and tests
	// that hold two write transactions open at once do not apply; nor does
	// the probe that a claim skips held rows (SkipLockedError).
	SingleWriter bool

	// ReturningUpdate is true when UPDATE ... RETURNING exists. Without it
	// the core locks the rows with a SELECT first and then updates them.
	ReturningUpdate bool

	// RecursiveScan is true when the database runs WITH RECURSIVE with a
	// correlated scalar subquery (ORDER BY ... LIMIT 1) in the recursive
	// member as one index probe a row, from the bound the row before
	// gives: the core steps through a queue's flow keys with it, so that
	// a claim of keyed items without limits writes no lane row. Without
	// it (or where the probe reads the index from its start, as MariaDB
	// 10.11 does) such claims take lanes.
	RecursiveScan bool

	// LockClause is appended to a SELECT that must lock the rows it reads
	// for the rest of the transaction: " FOR NO KEY UPDATE", " FOR UPDATE",
	// or "" where the transaction already excludes other writers.
	LockClause string

	// TransactionalDDL is true when CREATE TABLE and CREATE INDEX take part
	// in a transaction and roll back with it.
	TransactionalDDL bool

	// MaxBindParams is the largest number of bind parameters one statement
	// may carry.
	MaxBindParams int

	// MaxStatementBytes bounds the size of one statement with its bound
	// values (MySQL's max_allowed_packet); 0 means no limit below the bind
	// limit.
	MaxStatementBytes int

	// MaxInList bounds the number of values in one IN (...) list; 0 means
	// only MaxBindParams bounds it.
	MaxInList int

	// MaxInsertRows is the most rows one multi-row INSERT of items may
	// carry, within MaxBindParams; 0 leaves the core's default (500), which
	// suits a database whose prepare time grows with the statement
	// (SQLite). A database that plans a long VALUES list cheaply can take
	// a fan-out's whole page in one statement; the plan a session keeps of
	// a prepared INSERT grows with its rows too.
	MaxInsertRows int

	// DualTable names the table a SELECT of expressions alone must read
	// from ("dual" on Oracle); empty where "SELECT expr" is valid.
	DualTable string

	// ClockResolution is the finest step of the database clock as the
	// dialect stores it. Leases and heartbeats are required to be far above
	// it.
	ClockResolution time.Duration

	// MaxClockOffset is how far apart the clocks that Now reads on
	// different connections may be: 0 for a database with one clock, the
	// cluster's maximum clock offset for a distributed one (CockroachDB: 500
	// ms by default). The core refuses leases shorter than four times it.
	MaxClockOffset time.Duration

	// RetryAttempts is how many times the core tries a transaction, by
	// default, before it gives up on transient errors; 0 leaves the core's
	// default (10). A database that aborts conflicting transactions
	// instead of making them wait (serializable-only, as CockroachDB)
	// needs more under contention.
	RetryAttempts int
}
