// Package postgres is Plenum's dialect for PostgreSQL 13 and later, through
// pgx's database/sql adapter (github.com/jackc/pgx/v5/stdlib, driver name
// "pgx"). Importing it registers the dialect under the name "postgres".
//
//	db, err := postgres.Open("postgres://app@db:5432/app?sslmode=verify-full")
//	store, err := core.Open(ctx, db, postgres.Dialect(), core.Options{Migrate: true})
//
// A *sql.DB opened with sql.Open("pgx", dsn) works as well. An application
// that already has a *pgxpool.Pool gets a *sql.DB on the same pool with
// stdlib.OpenDBFromPool(pool), so that the core keeps one connection type;
// closing that *sql.DB leaves the pool open. Other PostgreSQL drivers are
// refused by Check: their errors cannot be classified, so serialization
// failures would not be retried.
//
// # Choices
//
// Isolation. Every transaction the dialect begins runs at READ COMMITTED,
// whatever default_transaction_isolation says. A claim locks the rows it
// takes with SKIP LOCKED; at READ COMMITTED a row that another transaction
// changed after the statement's snapshot is checked against the claim's
// filter again before it is locked, so claims stay exclusive through row
// locks alone. Under REPEATABLE READ or SERIALIZABLE the same claim fails
// with a serialization error whenever it meets such a row (106 of 200
// batches, when 16 claimers took 2,000 rows ten at a time).
//
// Claim. One round trip: a CTE selects the rows, in claim order (priority,
// available_at, id), LIMIT n FOR UPDATE SKIP LOCKED, and an UPDATE of the
// same table applies the claim to them and returns them:
//
//	WITH c AS (SELECT id FROM items WHERE <filter> ORDER BY priority, available_at, id
//	           LIMIT n FOR UPDATE SKIP LOCKED)
//	UPDATE items SET <claim> WHERE id = ANY(ARRAY(SELECT id FROM c)) RETURNING <columns>
//
// The update reaches the chosen rows through the primary key, their ids
// gathered into one array: as a semi-join (id IN (SELECT id FROM c)) the
// planner read the whole table where it was small enough to look cheap.
// The partial index (queue, priority, available_at, id) WHERE state =
// 'available' serves the CTE: the plan reads that index in order for the
// queue and stops after n rows, with no sort (TestClaimPlan_UsesPartialIndex
// logs the plan). The rows RETURNING yields come in no particular order.
//
// Lock strength. A fence locks the item with SELECT ... FOR NO KEY UPDATE
// (Capabilities.LockClause): it excludes other fences, claims and updates
// of the row, but not the FOR KEY SHARE lock that an INSERT of a row whose
// foreign key references the item takes, which FOR UPDATE would block for
// the length of the fence. The claim's CTE takes FOR UPDATE: the rows it
// picks are available items, which nothing references while they wait.
//
// Lists. A batch's ids are bound as one uuid[] (dialect.UUIDLister), and
// the lanes of a claim of keyed items as two arrays, their keys and their
// parts, read by one LATERAL subquery along the lanes' index
// (dialect.KeyLister): each statement has one text whatever the number of
// ids or lanes, planned and started once, where one subquery a lane made
// a claim of 50 lanes spend 7 to 15 ms in planning alone.
//
// Clock. Now is statement_timestamp(), everywhere the core reads the
// time: the moment the server received the statement, one value for the
// whole statement, moving from one statement to the next. Heartbeats, the
// reaper and fences compare and stamp times inside transactions that may
// last long, and now() is frozen at the start of the transaction: it would
// do nowhere in the core. clock_timestamp() moves within a statement as
// well, which would give the rows of one multi-row INSERT different times,
// in the order they are written (by key) instead of the order the caller
// gave them, and claims take items of one priority by time. Times are
// timestamptz, microseconds, compared on the server; the offset tests use
// is an interval literal added to it.
//
// Insert or ignore. INSERT ... VALUES ... ON CONFLICT DO NOTHING, without
// a conflict target, so that every unique index is covered; the command
// tag counts only the rows inserted, which is how the core learns that
// some rows already existed. It then finds the ids of those rows with one
// lookup per batch in which a row was skipped: an enqueue of n items costs
// one round trip per batch, and one more when an idempotency key already
// existed. (RETURNING would name only the inserted rows, not the existing
// ones, so it would save nothing.)
//
// Types and indexes. uuid, varchar(n), text, jsonb, integer, bigint,
// boolean and timestamptz. Payloads and results are jsonb, so they come
// back as the same document, normalised, not byte for byte: {"user":42}
// reads {"user": 42}, keys sorted (shorter first), the last of duplicate
// keys kept, 1e2 read as 100 (the package's payload test lists the cases).
// A handler that needs its exact bytes stores them as a JSON string. Indexes with a condition in the schema are
// partial: the claim path indexes only available items, lease expiry and
// an owner's claims only claimed ones, and the stuck fan-in scan only
// unfired barriers. DDL is transactional: a migration
// applies in one transaction, or not at all.
//
// Errors. 40001 (serialization failure), 40P01 (deadlock) and 55P03 (lock
// not available: NOWAIT, lock_timeout) are retryable: the core rolls the
// transaction back and runs all of it again. A connection lost (class 08,
// 57P01/57P02/57P03, a closed or broken connection) at commit gives
// core.ErrCommitUnknown instead of a retry. Nothing else is retried:
// 57014 (statement_timeout) included.
//
// Migration lock. Lock takes a session-level advisory lock,
// pg_advisory_lock, on the migrator's connection, keyed by the FNV-64a
// hash of "plenum:" and the lock's name, computed in Go so that every
// server version agrees (hashtext() is not guaranteed to). It waits as
// long as the context allows, outlasting lock_timeout and
// statement_timeout. Session locks need a session of their own: behind a
// pooler in transaction mode (PgBouncer's pool_mode=transaction) migrate
// with a direct connection.
//
// # Schema
//
// Plenum's statements name tables without a schema, so they live in the
// schema search_path resolves to: tables are created in current_schema(),
// the first schema of search_path that exists, and found through
// search_path. To keep them in a schema of their own, create the schema
// and set search_path in the DSN; pgx sends parameters it does not know as
// run-time settings:
//
//	postgres://app@db:5432/app?search_path=jobs
//	host=db dbname=app user=app search_path=jobs
//	postgres://app@db:5432/app?options=-csearch_path%3Djobs
//
// With a *pgxpool.Pool, set config.ConnConfig.RuntimeParams["search_path"]
// before pgxpool.NewWithConfig. Check refuses a search_path that names no
// existing schema (current_schema() is NULL), since nothing could then be
// created or found; TestConformance_NonDefaultSchema runs the whole
// conformance suite with search_path set to a schema of its own.
//
// # Wake-ups
//
// The dialect is a dialect.Notifier. An enqueue (and every other
// transaction that makes items available: a fence's enqueue, a fan-out's
// children, a fired barrier's join) runs SELECT pg_notify(channel, queue)
// in its own transaction, so the notification leaves at commit and never
// after a rollback; the channel is the items table's name, so stores on
// other prefixes are not woken. While a store has subscribers
// (core.Store.Subscribe, which every worker's claim loop uses) it runs
// LISTEN on one session taken out of its *sql.DB's pool (count it in
// SetMaxOpenConns) and never given back; a session lost is replaced after
// a backoff. PostgreSQL serializes the commits of transactions that
// notified, and LISTEN does not work behind a pooler in transaction mode:
// core.Options.DisableNotify turns both off.
//
// # When the network fails
//
// A server that stops answering without closing the connection (a
// partition that drops packets, a load balancer that forgot the flow, a
// host that lost power) would leave a call waiting on the kernel's
// retransmissions, about 15 minutes, or for ever where the call waits for
// a reply with nothing left to send. Open bounds it where the DSN does not
// (sqlkit.DefaultTCPBounds):
//
//   - connect_timeout (10 s): a new connection's dial and start-up;
//   - TCP keepalives (keepalives_idle 5 s, keepalives_interval 5 s,
//     keepalives_count 3) and, on Linux, tcp_user_timeout (15000 ms): a
//     connection whose peer acknowledges nothing for 15 s is closed, so a
//     statement or commit on it fails, as a lost connection, within about
//     20 s (the wait for a reply included); the LISTEN session of the
//     wake-ups is replaced.
//
// Each is a DSN parameter of libpq's name, which overrides the default:
// postgres://app@db/app?tcp_user_timeout=60000&connect_timeout=5.
// A long statement on a live server is not cut short: its kernel answers
// the probes. A *sql.DB opened otherwise (sql.Open("pgx", dsn), a
// pgxpool) has pgx's defaults; set a net.Dialer of the same settings as
// its DialFunc. A context deadline still bounds each call sooner; the
// worker gives its heartbeats one, and its owner stops itself when they
// fail (worker.Config.StaleAfter).
//
// # Check
//
// Check, run once by core.Open, refuses: a driver other than pgx;
// CockroachDB (use the cockroach dialect); PostgreSQL before 13 (nothing in
// the SQL needs more than 9.5, but older releases are past their end of
// life and untested); a search_path without an existing schema; a standby
// or a session with default_transaction_read_only on.
package postgres
