package dialect

import (
	"context"
	"database/sql"
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
// must issue its own BEGIN (SQLite's BEGIN IMMEDIATE) returns an
// sqlkit.ConnTx.
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
// databases: the union of the parts below, each a role of its own.
// Implementations must be safe for concurrent use. A dialect implements
// Dialect whole; a function that needs one role asks only for that part
// (the migration generator asks for a Schema), so that what it can touch
// shows in its signature.
type Dialect interface {
	Describer
	Syntax
	Binder
	Transactor
	Classifier
	DDL
	Locker
}

// Schema is the part of a Dialect that the migration generator asks for:
// it renders Plenum's schema and the files of its migrations (package
// migrations: Statements, Render, WriteFiles) without a database.
type Schema interface {
	Describer
	Syntax
	DDL
}

// Describer is the part of a Dialect that says what it is: its name and
// the facts about its database.
type Describer interface {
	// Name is the dialect's registered name ("sqlite", "postgres", ...). It is
	// for messages, flags and the registry, never for branching.
	Name() string

	// Capabilities are the facts about the database that change how the core
	// shapes its work.
	Capabilities() Capabilities
}

// Syntax is the part of a Dialect that writes the pieces of a statement
// that differ between databases; the core writes the rest once, with '?'
// placeholders.
type Syntax interface {
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

	// InsertIgnore returns a statement that inserts n rows into table, each
	// row written as the expression list row (with '?' placeholders), and
	// silently skips every row that would violate a unique index (the
	// conflict columns name the one that matters). The statement's rows
	// affected must equal the number of rows inserted. The result is already
	// rebound.
	InsertIgnore(table string, columns []string, row string, n int, conflict []string) string
}

// Binder is the part of a Dialect that says how values travel: what to
// bind for a column type whose driver value differs between databases,
// and how a time read back becomes a time.Time.
type Binder interface {
	// UUID returns the value to bind for a UUID column.
	UUID(u uuid.UUID) any
	// JSON returns the value to bind for a JSON column.
	JSON(b []byte) any
	// Bool returns the value to bind for a boolean column.
	Bool(b bool) any
	// ScanTime converts a time column's value, as the driver returns it, to
	// a time in UTC.
	ScanTime(src any) (time.Time, error)
}

// Transactor is the part of a Dialect that runs work on the database: the
// settings its connections must have, how a transaction begins, and the
// claim that runs inside one.
type Transactor interface {
	// Check verifies that db has every setting the dialect depends on and
	// returns an error naming the missing one. It runs once, at open.
	Check(ctx context.Context, db *sql.DB) error

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
}

// Classifier is the part of a Dialect that reads the database's errors.
type Classifier interface {
	// Classify says what an error from this database means to the core.
	Classify(err error) ErrorClass
}

// DDL is the part of a Dialect that renders the schema: the statements
// that create and drop Plenum's tables, indexes and columns.
type DDL interface {
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
}

// Locker is the part of a Dialect that takes a named lock across
// processes (the migrator's). It is not a sync.Locker: the lock is the
// database's, and taking it may fail.
type Locker interface {
	// Lock takes a lock named name, waiting for it as long as ctx allows,
	// and returns the function that releases it: a session-level lock on
	// conn, or, where the database has none that works (CockroachDB), a
	// lock the dialect holds on a session of its own. Either way conn is
	// left outside any transaction: the migrator runs its statements on
	// it. A dialect whose write transactions already exclude each other
	// (Capabilities.SingleWriter) may return a no-op.
	Lock(ctx context.Context, conn *sql.Conn, name string) (unlock func(context.Context) error, err error)
}
