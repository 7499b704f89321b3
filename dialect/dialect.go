// Package dialect is the contract between Plenum's database-agnostic core and
// one SQL database.
//
// The core writes every statement that is the same on all databases once, with
// '?' placeholders, and asks the dialect for the pieces that differ: the
// placeholder style (Rebind), the database clock (Now, AddMicros), how a
// transaction begins (Begin), the claim statement (Claim), insert-or-ignore
// (InsertIgnore), how values are bound and read back (UUID, JSON, Bool,
// ScanTime), how errors are classified (Classify), the DDL for the schema
// (CreateTable, CreateIndex, DropTable, DropIndex, AddColumn, DropColumn:
// shared shapes in TableDDL, IndexDDL, AddColumnDDL, DropColumnDDL and
// DropIndexDDL) and a check that a connection has the
// settings the dialect depends on (Check). Everything else is a capability flag
// in Capabilities. The core never asks a dialect for its name to decide what to
// do: a new database is one package that implements Dialect and passes the
// conformance suite.
//
// Writing a dialect: implement Dialect in one package; register it once,
// from init, with a Registration (the Dialect, an Open that turns a DSN
// into a ready *sql.DB, and what its DSNs look like: see Register); add the
// package's import to dialect/builtin, which the CLI and the migration
// generator link (go generate ./migrations then writes its SQL, and every
// CLI command can open it); and run conformance.Run from the package's test
// against a real server. The contract's sharp edges:
//
//   - Now must move between statements of one transaction, and should hold
//     still within one statement (PostgreSQL's statement_timestamp(): not
//     now(), frozen for the transaction, nor clock_timestamp(), which
//     stamps the rows of one insert apart); every gating time is computed
//     with it.
//   - InsertIgnore's rows affected must be exactly the rows inserted: the
//     core counts fan-out children and learns duplicate keys from it.
//   - Claim must take only rows no other transaction holds (SKIP LOCKED) and
//     lock only those; where it needs several statements (no UPDATE ...
//     RETURNING), it returns the rows of the last. Parsing the words is
//     not enough: the migrator and a worker's Start prove it on the live
//     database, a second session's claim taking the other of two rows
//     while a first session's claim holds one, and refuse, with a
//     SkipLockedError, a database whose claim takes the held row too or
//     waits for it. A database of one writer says so with
//     Capabilities.SingleWriter and is not probed.
//   - The core never relies on the row count of an UPDATE that may leave
//     every value as it was, so databases that count changed rows (MySQL)
//     need no special setting.
//   - Begin chooses the isolation level: READ COMMITTED where claims under
//     stricter levels fail or deadlock; a database that is serializable only
//     must classify its serialization failures as Retryable, and the core
//     runs the whole transaction again.
//   - Classify must report a connection lost as ConnectionLost: at commit
//     that becomes ErrCommitUnknown instead of a blind retry.
//   - Where DDL is not transactional, a migration that failed half way is
//     completed by running it again, so every DDL statement must be safe to
//     run again after it succeeded: IF [NOT] EXISTS where the database has
//     it, else the dialect implements the probers (TableProber,
//     IndexProber, ColumnProber) and the migrator skips what is already
//     done.
package dialect

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Querier is what runs statements: *sql.DB, *sql.Conn, *sql.Tx, *sqlx.DB and
// *sqlx.Tx all satisfy it, and so does every Tx a dialect's Begin returns.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Tx is a transaction begun by a dialect. *sql.Tx satisfies it; a dialect that
// must issue its own BEGIN (SQLite's BEGIN IMMEDIATE) returns a ConnTx.
type Tx interface {
	Querier
	Commit() error
	Rollback() error
}

// TxOptions says what a transaction will do, so that the dialect can choose
// how to begin it.
type TxOptions struct {
	// ReadOnly transactions never write; a dialect may begin them more
	// cheaply (SQLite: a deferred transaction instead of an immediate one).
	ReadOnly bool
	// Urgent transactions are short writes that keep the process alive in
	// the eyes of others (a heartbeat). A dialect that queues the writers
	// of a process (SQLite) lets them go before the others waiting, so
	// that a process busy with its own writes still heartbeats on time.
	Urgent bool
}

// Dialect is one database's answer to everything that differs between
// databases. Implementations must be safe for concurrent use.
type Dialect interface {
	// Name is the dialect's registered name ("sqlite", "postgres", ...). It is
	// for messages, flags and the registry, never for branching.
	Name() string

	// Capabilities are the facts about the database that change how the core
	// shapes its work.
	Capabilities() Capabilities

	// Rebind rewrites a statement written with '?' placeholders into the
	// dialect's placeholder style. '?' inside quoted literals is left alone.
	Rebind(query string) string

	// Param returns the placeholder for a value bound to a column of type t
	// where the database cannot infer the type from context (a CASE branch,
	// say): "?" for most, "CAST(? AS jsonb)" where a cast is needed. It is
	// written with '?' and rebound with the rest of the statement.
	Param(t ColumnType) string

	// Now returns the SQL expression of the database clock, shifted by offset.
	// A non-zero offset exists so that tests can move time on the database
	// side; production stores use 0. The expression must move between
	// statements of one transaction (the reaper and heartbeats compare against
	// it inside long transactions), and should give every row of one
	// statement the same time (the items of one enqueue are then claimed in
	// the order they were given).
	Now(offset time.Duration) string

	// Limit returns the clause, with a leading space, that ends a SELECT
	// after at most n rows: " LIMIT 10" or " FETCH FIRST 10 ROWS ONLY".
	Limit(n int) string

	// AddMicros returns an expression that adds a number of microseconds,
	// bound to one '?' placeholder in the result, to the time expression t.
	AddMicros(t string) string

	// Begin starts a transaction on db, with the isolation level and locking
	// mode the dialect's guarantees depend on.
	Begin(ctx context.Context, db *sql.DB, opts TxOptions) (Tx, error)

	// Claim atomically takes up to spec.Limit rows of spec.Table that match
	// spec.Filter, in spec.OrderBy order, applies spec.Set to them, and
	// returns spec.Returning of the rows it changed. Rows another transaction
	// holds are passed over, not waited on, where the database has row locks
	// (proved on the live database before claims begin: SkipLockedError).
	// It runs inside the transaction q.
	Claim(ctx context.Context, q Querier, spec ClaimSpec) (*sql.Rows, error)

	// InsertIgnore returns a statement that inserts n rows into table, each
	// row written as the expression list row (with '?' placeholders), and
	// silently skips every row that would violate a unique index (the
	// conflict columns name the one that matters). The statement's rows
	// affected must equal the number of rows inserted. The result is already
	// rebound.
	InsertIgnore(table string, columns []string, row string, n int, conflict []string) string

	// UUID returns the value to bind for a UUID column.
	UUID(u uuid.UUID) any
	// JSON returns the value to bind for a JSON column.
	JSON(b []byte) any
	// Bool returns the value to bind for a boolean column.
	Bool(b bool) any
	// ScanTime converts a time column's value, as the driver returns it, to
	// a time in UTC.
	ScanTime(src any) (time.Time, error)

	// Classify says what an error from this database means to the core.
	Classify(err error) ErrorClass

	// Check verifies that db has every setting the dialect depends on and
	// returns an error naming the missing one. It runs once, at open.
	Check(ctx context.Context, db *sql.DB) error

	// CreateTable returns the statements that create t (and nothing else),
	// each safe to run again once it has succeeded.
	CreateTable(t Table) []string
	// CreateIndex returns the statements that create index ix on table.
	CreateIndex(table string, ix Index) []string
	// DropTable returns the statements that drop table if it exists.
	DropTable(table string) []string
	// DropIndex returns the statements that drop index ix of table, as
	// CreateIndex created it (with whatever CreateIndex added for it: a
	// substitute's generated column, say).
	DropIndex(table string, ix Index) []string
	// AddColumn returns the statements that add column c to table, which
	// may hold rows: c is nullable (the migrator adds no other).
	AddColumn(table string, c Column) []string
	// DropColumn returns the statements that drop column c of table.
	DropColumn(table string, c Column) []string

	// Lock takes a lock named name, waiting for it as long as ctx allows,
	// and returns the function that releases it: a session-level lock on
	// conn, or, where the database has none that works (CockroachDB), a
	// lock the dialect holds on a session of its own. Either way conn is
	// left outside any transaction: the migrator runs its statements on
	// it. A dialect whose write transactions already exclude each other
	// (Capabilities.SingleWriter) may return a no-op.
	Lock(ctx context.Context, conn *sql.Conn, name string) (unlock func(context.Context) error, err error)
}

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

// ClaimSpec is what the core asks of a claim. Every SQL fragment is written
// with '?' placeholders; the dialect assembles the fragments into its own
// statement shape, orders their arguments, and rebinds the result.
type ClaimSpec struct {
	// Table is the items table (a safe identifier).
	Table string
	// Filter is the boolean condition a claimable row meets, with FilterArgs.
	Filter     string
	FilterArgs []any
	// OrderBy is the ORDER BY list that decides which rows go first.
	OrderBy string
	// Limit is the most rows to take; always at least 1.
	Limit int
	// Set is the assignment list applied to each claimed row, with SetArgs.
	Set     string
	SetArgs []any
	// Returning lists the columns to return, in order, of each claimed row
	// after Set was applied.
	Returning []string
	// Key is the primary key column.
	Key string
	// Seek, when set, is the partial index that serves the claim: Filter
	// includes its conditions (Where), compares its first columns for
	// equality, one each, with the first FilterArgs, in order, and OrderBy
	// lists its remaining columns. A dialect that stands in for partial
	// indexes with expression indexes (Oracle) writes its claim through
	// the index's expressions, so that the optimizer can use it. Other
	// dialects ignore it.
	Seek *Index
}

// Validate reports what spec lacks, so that a dialect's Claim refuses it
// before it writes any SQL.
func (s ClaimSpec) Validate() error {
	switch {
	case s.Limit < 1:
		return fmt.Errorf("limit %d, must be at least 1", s.Limit)
	case s.Table == "" || s.Key == "" || s.Set == "" || s.Filter == "" || s.OrderBy == "":
		return errors.New("table, key, set, filter and order by are all required")
	case len(s.Returning) == 0:
		return errors.New("no returning columns")
	}
	return nil
}

// Candidates returns the SELECT of the keys a claim would take, in claim
// order, ended by limit (the dialect's Limit(spec.Limit)): the part every
// dialect's claim statement shares, to wrap in its own locking and update.
func (s ClaimSpec) Candidates(limit string) string {
	return "SELECT " + s.Key + " FROM " + s.Table + " WHERE " + s.Filter + " ORDER BY " + s.OrderBy + limit
}
