package cockroach

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
	"github.com/plenumdb/plenum/internal/pgbounds"
	"github.com/plenumdb/plenum/postgres"
)

// Name is the dialect's registered name.
const Name = "cockroach"

// DriverName is the database/sql driver name of pgx's stdlib adapter, the
// driver this dialect works through (CockroachDB speaks PostgreSQL's wire
// protocol).
const DriverName = postgres.DriverName

// MaxClockOffset is the clock offset the dialect allows between the
// cluster's nodes: CockroachDB's default --max-offset. Leases and
// heartbeats are required to be at least four times it
// (core.Store.MinLease).
const MaxClockOffset = 500 * time.Millisecond

// RetryAttempts is how many times a store tries a transaction by default on
// CockroachDB (Capabilities.RetryAttempts; Options.Retry.MaxAttempts
// overrides it). Conflicting serializable transactions abort and retry
// instead of waiting, so contention costs attempts, not time.
const RetryAttempts = 50

// LockTable is the table that holds the rows of Lock: created on
// first use, in the current schema, and always empty (no lock row is ever
// committed).
const LockTable = "plenum_locks"

const openTimeout = 30 * time.Second

func init() {
	dialect.Register(dialect.Registration{
		Dialect: Dialect(),
		Open:    Open,
		DSN:     dialect.DSNForm{Example: "postgresql://root@localhost:26257/defaultdb?sslmode=disable"},
		Version: serverVersion,
	})
}

// serverVersion returns the first words of version(): "CockroachDB CCL
// v24.3.5".
func serverVersion(ctx context.Context, db *sql.DB) (string, error) {
	var v string
	if err := db.QueryRowContext(ctx, "SELECT version()").Scan(&v); err != nil {
		return "", fmt.Errorf("cockroach: version: %w", err)
	}
	f := strings.Fields(v)
	return strings.Join(f[:min(3, len(f))], " "), nil
}

// crdbDialect is the PostgreSQL dialect with what CockroachDB does
// differently overridden: isolation, lock strength, clock offset, error
// codes, DDL, the version check and the migration lock.
type crdbDialect struct {
	dialect.Dialect // PostgreSQL's: placeholders, clock, claim, values

	// hashSharded renders UUID primary keys and time-led indexes with
	// USING HASH, which PostgreSQL rejects.
	hashSharded bool
	// check verifies the server; the PostgreSQL-compatible test mode
	// accepts PostgreSQL.
	check func(d *crdbDialect, ctx context.Context, db *sql.DB) error
	// lockTable holds Lock's rows.
	lockTable string
}

var theDialect = &crdbDialect{
	Dialect:     postgres.Dialect(),
	hashSharded: true,
	check:       (*crdbDialect).checkCockroach,
	lockTable:   LockTable,
}

// Dialect returns the CockroachDB dialect. It is stateless and safe for
// concurrent use.
func Dialect() dialect.Dialect { return theDialect }

// Open opens a *sql.DB on dsn through pgx's database/sql adapter and pings
// it, so that a wrong DSN fails here rather than at first use. dsn is a
// PostgreSQL URL or keyword/value string, e.g.
// postgresql://user@host:26257/db?sslmode=verify-full.
//
// The pool opens at most dialect.DefaultMaxOpenConns (25) connections at
// once; database/sql's idle and lifetime settings are left as they are.
// Set another bound with db.SetMaxOpenConns before handing db to
// core.Open (worker.MinOpenConns says what a worker needs; 0 removes the
// bound).
//
// A call on a connection whose server stopped answering (a half-open
// connection: a partition, a load balancer that dropped the flow, a node
// whose host lost power) fails within about 20 s, and a new connection
// within 10 s, as with the postgres dialect (sqlkit.DefaultTCPBounds:
// connect_timeout, TCP keepalives, and TCP_USER_TIMEOUT on Linux), where
// the DSN sets none of libpq's connect_timeout, keepalives_idle,
// keepalives_interval, keepalives_count and tcp_user_timeout. All of them
// are the client's alone: none is sent to CockroachDB as a session
// setting.
func Open(dsn string) (*sql.DB, error) {
	if strings.TrimSpace(dsn) == "" {
		return nil, errors.New("cockroach: open: empty DSN (e.g. postgresql://root@localhost:26257/defaultdb?sslmode=disable)")
	}
	cfg, err := pgbounds.Config(dsn, "cockroach: open", false)
	var parse *pgconn.ParseConfigError
	if errors.As(err, &parse) {
		return nil, postgres.ConnectError("cockroach: open", err)
	}
	if err != nil {
		return nil, err
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(dialect.DefaultMaxOpenConns)
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, postgres.ConnectError("cockroach: open", err)
	}
	return db, nil
}

// Name returns "cockroach".
func (d *crdbDialect) Name() string { return Name }

// Capabilities are PostgreSQL's, except that:
//
//   - the fence locks with FOR UPDATE: CockroachDB has no weaker
//     exclusive lock (FOR NO KEY UPDATE acts as FOR UPDATE);
//   - DDL is not transactional: since v25.1 a schema change inside an
//     explicit transaction commits the transaction first
//     (autocommit_before_ddl), and before that schema changes in a
//     transaction were not fully atomic; migrations therefore run
//     statement by statement, each idempotent;
//   - the clock of each gateway node may be up to MaxClockOffset away from
//     the others', so leases must be far longer than that;
//   - the server refuses a wire-protocol message over
//     sql.conn.max_read_buffer_message_size, 16 MiB by default, so batches
//     of inserts stay at half of that;
//   - the scan of a queue's flow keys (a recursive common table
//     expression with a correlated subquery) is not used: CockroachDB's
//     optimizer must decorrelate it, which was not verified on a server,
//     so claims of keyed items take lanes there as before.
func (d *crdbDialect) Capabilities() dialect.Capabilities {
	caps := d.Dialect.Capabilities()
	caps.LockClause = " FOR UPDATE"
	caps.TransactionalDDL = false
	caps.MaxClockOffset = MaxClockOffset
	caps.MaxStatementBytes = 8 << 20
	caps.RetryAttempts = RetryAttempts
	caps.RecursiveScan = false
	return caps
}

// Begin starts a SERIALIZABLE transaction, CockroachDB's default and the
// level at which its guarantees (and this dialect's) hold. Every
// transaction may then fail with a retry error (40001), which Classify
// reports as retryable: the core rolls back and runs the whole transaction
// again. Read-only transactions begin READ ONLY.
func (d *crdbDialect) Begin(ctx context.Context, db *sql.DB, opts dialect.TxOptions) (dialect.Tx, error) {
	if db == nil {
		return nil, errors.New("cockroach: begin: nil *sql.DB")
	}
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable, ReadOnly: opts.ReadOnly})
	if err != nil {
		// Not tx itself: a nil *sql.Tx in a Tx interface is not nil.
		return nil, fmt.Errorf("cockroach: begin: %w", err)
	}
	return tx, nil
}

// codeRetriable is CockroachDB's own retry code from before it reported
// 40001; cockroach-go's retry loop still honours it, and so does Classify.
const codeRetriable = "CR000"

// Classify is PostgreSQL's classification (40001, 40P01 and 55P03
// retryable; 23505 a unique violation; connection failures and 40003
// "result is ambiguous" ConnectionLost, so that an ambiguous commit
// becomes core.ErrCommitUnknown), plus CR000 as retryable.
func (d *crdbDialect) Classify(err error) dialect.ErrorClass {
	if sqlState(err) == codeRetriable {
		return dialect.Retryable
	}
	return d.Dialect.Classify(err)
}

// Check verifies that db is a CockroachDB of version 23.2 or later
// (MinVersion) reached through pgx, with a schema to work in and a
// writable session.
func (d *crdbDialect) Check(ctx context.Context, db *sql.DB) error {
	return d.check(d, ctx, db)
}

// TableExists reports whether table is visible through search_path, as
// PostgreSQL's dialect does (CockroachDB has to_regclass since 22.1).
func (d *crdbDialect) TableExists(ctx context.Context, q dialect.Querier, table string) (bool, error) {
	p, ok := d.Dialect.(interface {
		TableExists(context.Context, dialect.Querier, string) (bool, error)
	})
	if !ok {
		return false, errors.New("cockroach: table exists: the PostgreSQL dialect has no TableExists")
	}
	return p.TableExists(ctx, q, table)
}

// ColumnExists reports whether table, in the session's current schema,
// has a column named column (dialect.ColumnProber): the migrator skips by
// it a data step whose down reads a column that a down stopped half-way
// has dropped already. information_schema.columns is the same on
// CockroachDB as on PostgreSQL.
func (d *crdbDialect) ColumnExists(ctx context.Context, q dialect.Querier, table, column string) (bool, error) {
	return sqlkit.Exists(ctx, q, "cockroach: column exists", d.Rebind("SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ? AND column_name = ?"), table, column)
}

// Refusal is PostgreSQL's: CockroachDB reports too many connections,
// authentication and privilege failures with the same SQLSTATE codes.
func (d *crdbDialect) Refusal(err error) dialect.Refusal {
	if rc, ok := d.Dialect.(dialect.RefusalClassifier); ok {
		return rc.Refusal(err)
	}
	return dialect.NotRefused
}
