// Package cockroach is Plenum's dialect for CockroachDB 23.2 and later,
// through pgx's database/sql adapter (driver name "pgx"), as for
// PostgreSQL. Importing it registers the dialect under the name
// "cockroach" (and the postgres dialect, which it is built on).
//
//	db, err := cockroach.Open("postgresql://app@crdb:26257/app?sslmode=verify-full")
//	store, err := core.Open(ctx, db, cockroach.Dialect(), core.Options{Migrate: true})
//
// A *sql.DB from stdlib.OpenDBFromPool(pool) works as well. Tables live in
// the schema search_path resolves to, as with PostgreSQL (see the postgres
// package).
//
// The dialect is PostgreSQL's, with only what CockroachDB does differently
// overridden; the statements (insert-or-ignore, clock, placeholders) are
// the same, and the claim too but for how its update finds the rows
// chosen (Claim). The lanes of a claim of keyed items are read with one
// subquery a lane: PostgreSQL's arrays and LATERAL read (KeyLister) take
// a LIMIT from the outer row, which was not verified on CockroachDB. Sources are CockroachDB's documentation pages and the
// issues of github.com/cockroachdb/cockroach, named below by number.
//
// # Serializable transactions
//
// Begin asks for SERIALIZABLE, CockroachDB's default. Any transaction may
// then fail with a retry error, SQLSTATE 40001 ("restart transaction"; see
// the Transaction Retry Error Reference); Classify reports it, and CR000,
// the code older servers used and cockroach-go still honours, as
// retryable, and the core rolls back and runs the whole transaction again,
// fenced functions included. 40003 ("result is ambiguous") and a lost
// connection at commit give core.ErrCommitUnknown. Under contention more
// transactions need a retry than on PostgreSQL, so a store on this dialect
// tries a transaction up to RetryAttempts (50) times by default, as
// cockroach-go's own loop does (Capabilities.RetryAttempts;
// core.Options.Retry.MaxAttempts overrides it).
//
// # Locks
//
// A fence locks with FOR UPDATE: CockroachDB has no FOR NO KEY UPDATE of
// its own (it acts as FOR UPDATE; docs: SELECT FOR UPDATE). Under
// SERIALIZABLE these locks are best-effort (unreplicated: a lease transfer
// or a range split can drop them). Nothing depends on them for
// correctness: serializable isolation orders conflicting transactions, and
// every fenced write checks the claim token; the locks only spare retries.
//
// # SKIP LOCKED
//
// Claims use SELECT ... FOR UPDATE SKIP LOCKED, supported since v22.2
// (#85720). Its open caveats, and what they mean for a queue:
//
//   - It can skip rows that are not locked (#121917): a claim may return
//     fewer items than are available, or none while some are. Workers claim
//     again; nothing is ever claimed twice, since exclusivity rests on
//     serializable isolation and the claim token, not on the skip.
//   - A plan that sorts above the lock locks every row it reads (#173245,
//     "topk" above "lock"): one claim then holds the whole queue and the
//     others find nothing. The claim's ORDER BY follows the partial index
//     (queue, priority, available_at, id) WHERE state = 'available', so the
//     plan should read that index in order and stop at the limit; check
//     with EXPLAIN on your cluster if claims starve each other.
//   - Tables with several column families cannot use SKIP LOCKED
//     (#160961): do not split the items table into column families.
//
// Run the conformance suite (conformance.Run, or plenum conformance) on
// your cluster: its exclusivity test is the one that matters most here.
//
// # DDL
//
// Plenum's ids are UUIDv7, which grow with time: every insert would land
// at the end of one range, on one node. Primary keys that are one UUID
// column are therefore hash-sharded, PRIMARY KEY (id) USING HASH, and so
// are indexes led by a time column (lease expiry, heartbeats), whose
// values grow the same way (docs: Hash-sharded Indexes; a virtual shard
// column since v22.1, sql.defaults.default_hash_sharded_index_bucket_count
// buckets, 16 by default). PostgreSQL rejects USING HASH. Partial indexes
// stay partial. DDL is not transactional here (Capabilities): since v25.1
// a schema change inside a transaction first commits it
// (autocommit_before_ddl, on by default), and before that schema changes
// in a transaction were not fully atomic; the migrator runs each statement
// on its own, each idempotent (IF [NOT] EXISTS), marks a version as
// started before its first statement and records it only after its last,
// so that a run that failed half way shows in migrations.Status and the
// next run completes it. DROP INDEX names its table (table@index). The
// attempts table of version 2 has a two-column key (item_id, n) and is not
// hash-sharded. Payloads and results are JSONB: they come back normalised,
// as on PostgreSQL (see the postgres package), not byte for byte. Version
// 6's unique index of keys is partial (WHERE unique_key IS NOT NULL), and
// the enqueue's INSERT ... ON CONFLICT DO NOTHING names no conflict
// target, so that PostgreSQL takes every unique index, partial ones
// included, as an arbiter. That CockroachDB does the same is assumed, not
// verified here: the conformance suite's Enqueue_IdempotencyKey and
// FanOut_IdempotentResume fail on a cluster where it does not.
//
// # Clock
//
// Now is statement_timestamp(), as on PostgreSQL: one value per statement,
// moving from one statement to the next. On CockroachDB it is read from the
// physical clock of the gateway node the session is connected to (#5915),
// not from the transaction's timestamp, and nodes' clocks may be up to the
// cluster's maximum offset apart: 500 ms by default (--max-offset).
// Capabilities.MaxClockOffset says so, the store refuses leases and
// heartbeats shorter than four times it (2 s), and the conformance suite
// allows it when it compares times. A cluster started with a larger
// --max-offset needs leases to match.
//
// # Message size
//
// CockroachDB refuses a wire-protocol message larger than
// sql.conn.max_read_buffer_message_size, 16 MiB by default: inserts are
// batched to stay under half of it, and a single payload or result must
// stay under it (core.Options.MaxPayloadBytes is 1 MiB by default).
//
// # Migration lock
//
// CockroachDB's pg_advisory_lock is a stub that locks nothing (#13546;
// the docs list advisory locks as unsupported). Lock holds a row lock
// instead: on a session of its own, opened with the connection's settings,
// it begins a transaction and inserts the lock's name into the table
// plenum_locks (created on first use, in the current schema), and waits
// there while another holder's uncommitted row has the same key. Unlock
// rolls the transaction back, so no row is ever committed and the table
// stays empty; if the process dies, its session ends and the transaction
// with it. The separate session keeps the migrator's own connection free
// for the migration's statements. The same mechanism works on PostgreSQL.
//
// # When the network fails
//
// Open bounds a call on a connection whose node stopped answering as the
// postgres dialect does (see its documentation): connect_timeout 10 s,
// TCP keepalives (5 s quiet, every 5 s, 3 probes) and, on Linux,
// tcp_user_timeout 15000 ms, each overridden by libpq's name in the DSN.
// None of them is sent to CockroachDB as a session setting. Not run
// against a CockroachDB cut off from its client (none here): the unit
// tests check what Open reads from the DSN.
//
// # Check
//
// Check refuses: a driver other than pgx; a server that is not CockroachDB
// (use the postgres dialect for PostgreSQL); CockroachDB before v23.2
// (MinVersion: the oldest release line that refuses SKIP LOCKED where it
// would return wrong rows, #116776, rather than returning them, and older
// lines are out of support); a search_path without an existing schema; a
// session with default_transaction_read_only on.
//
// # Tests
//
// There is no CockroachDB in this repository's CI. The dialect's own
// statements, its serializable transactions, retry classification, lock
// and migration path run against PostgreSQL with every session
// serializable, with ten times the retry budget: PostgreSQL fails every
// transaction that waited on a row another one updated, where CockroachDB
// queues the writer and moves its timestamp on, so a dozen workers counting
// arrivals on one barrier row take more attempts there (up to 67 for one
// transaction in runs under load) than the dialect's budget allows.
// TestCockroachDB runs the DDL, the lock and the whole conformance suite
// against a real CockroachDB, with the dialect's own budget, where
// PLENUM_COCKROACH_DSN is set; the containers module (containers/) runs the
// suite on a CockroachDB it starts where Docker answers.
package cockroach
