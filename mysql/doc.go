// Package mysql is Plenum's dialect for MySQL 8.0.11+ and MariaDB 10.6+,
// through github.com/go-sql-driver/mysql (driver name "mysql"). One dialect
// serves both servers: it writes only SQL that both accept, and the generated
// migration files are the same for both. Importing it registers the dialect
// under the name "mysql".
//
// Open a database with Open, which adds every setting the dialect depends on
// to the DSN (see DSN). A *sql.DB opened otherwise must carry them too: Check,
// which the store runs at open, refuses it with an error that names the
// setting to change.
//
// # Claims
//
// Neither server has UPDATE ... RETURNING (MariaDB has RETURNING on INSERT
// and DELETE only), so a claim is three statements in the caller's
// transaction:
//
//	SELECT id FROM items WHERE <filter> ORDER BY priority, available_at, id LIMIT n FOR UPDATE SKIP LOCKED
//	UPDATE items SET <claim> WHERE id IN (...)
//	SELECT <columns> FROM items WHERE id IN (...) ORDER BY priority, available_at, id
//
// The first locks the rows it returns and passes over rows that other
// transactions hold. (MariaDB refuses a LIMIT in an IN subquery, error 1235,
// and an UPDATE ... ORDER BY ... LIMIT waits on locked rows instead of
// skipping them, so the SELECT cannot be folded into the UPDATE.) The core
// claims its items in two: the dialect's LockRows (dialect.RowLocker) reads
// the whole rows, and the database clock, in the locking SELECT; the core
// then updates them with that clock's reading bound as the claim's time,
// and returns the rows as the update made them, since it wrote every
// change. The claim
// must lock only the rows it takes, which it does only when it reads them
// through an index in claim order: were the server to sort (EXPLAIN's "Using
// filesort"), InnoDB would lock every row it read to sort. The claim index
// below serves the filter's equalities (state, queue) and then gives the rows
// in ORDER BY order, so the server stops after n; the package's EXPLAIN test
// checks that the claim index is used without a filesort, and that a claim of
// n rows reads n rows and locks 2n index records (each row in the claim index
// and in the primary key). Capabilities.ReturningUpdate is false, so the
// core, too, locks rows with a SELECT ... FOR UPDATE before its other
// updates, but for a completion of items in no barrier, or all in the one
// barrier their claims name: one UPDATE (fenced on that barrier too), its
// rows taken through the primary key in id order, whose row count says
// whether every item was still held. The EXISTS test of the owner in the claim's filter does not lock
// the owner's row (a locking clause does not reach a subquery on either
// server), so a heartbeat of the same owner does not block or empty a claim.
//
// Every claim and completion moves a row out of the claim index's range for
// its queue; InnoDB only marks the old entry deleted, and its purge thread
// removes it later. Until then a claim steps over those entries: in the
// EXPLAIN test, right after 18,000 items of the queue were completed, a claim
// of 10 read 7,233 pages (7 ms); once purged, 23 pages (0.05 ms). A queue
// whose purge falls far behind (a long-running transaction holds it back)
// claims more slowly, as PostgreSQL's does with dead tuples.
//
// Transactions run at READ COMMITTED (Begin). Under the servers' default,
// REPEATABLE READ, a claim that scans to the end of the claimable range takes
// gap locks: producers' inserts then wait on claimers and claimers deadlock
// with each other. (In this package's contention test on MariaDB 10.11, four
// producers and eight claimers met 50 to 160 deadlocks at REPEATABLE READ
// and took three to six times as long as at READ COMMITTED, which met none.)
// READ COMMITTED
// takes no gap locks for these reads and releases at once the locks of rows
// that do not match. A transaction of the application's own that enqueues or
// claims (EnqueueTx, ClaimTx) should be begun with Store.Begin for the same
// reason.
//
// # Indexes without partial indexes
//
// Neither server has partial indexes. A non-unique partial index becomes a
// composite index led by the columns its conditions compare with a value:
// the claim index (queue, priority, available_at, id) WHERE state =
// 'available' becomes (state, queue, priority, available_at, id), the lease
// index (state, lease_expires_at), the owner index (state, claimed_by) and
// the unfired-barriers index (created_at, id) WHERE fired_at IS NULL becomes
// (fired_at, created_at, id), which InnoDB seeks to NULL in creation order;
// an IS NOT NULL condition adds nothing (the barrier index is (barrier_id,
// id), NULLs included). Such an index also holds the rows the partial one
// would leave out, which costs space but changes no result. A generated
// column that is NULL when a row is not claimable would index only claimable
// rows, but the server uses it only for queries that name that column (or,
// on MySQL, repeat its exact expression), so the core's claim filter,
// written once for every dialect, would have to change; the composite index
// serves the filter as it is.
//
// A unique partial index (none in the schema yet) cannot be widened that way
// without becoming weaker or stricter than the partial one, which the
// contract forbids: it becomes a unique index over its columns plus a virtual
// generated column that is 1 where the conditions hold and NULL elsewhere
// (NULLs never collide), added with the index by one ALTER TABLE.
//
// # Insert-or-ignore
//
// InsertIgnore is INSERT ... ON DUPLICATE KEY UPDATE id = id: a row that hits
// a unique index changes nothing and counts 0 affected rows, an inserted row
// counts 1, so rows affected is the number of rows inserted, and the core
// learns which rows were new by comparing the ids it made with those it finds
// by key. INSERT IGNORE is not used: it also turns errors into warnings and
// stores coerced values ('toolongvalue' as 'too', 999 as 127 in a TINYINT),
// even in strict mode. The count is right only without the CLIENT_FOUND_ROWS
// flag (the DSN parameter clientFoundRows=true), which makes a found row
// count 1: DSN refuses it, and Check refuses a connection that has it, found
// by an UPDATE that changes nothing on a TEMPORARY table (which needs the
// CREATE TEMPORARY TABLES privilege on the database).
//
// Batches are bounded by the bind limit (65,535 placeholders) and by
// MaxStatementBytes (4 MiB, Capabilities.MaxStatementBytes), which the core
// counts by payload and key plus a fixed overhead per row; Check requires a
// max_allowed_packet of at least MinMaxAllowedPacket (8 MiB) to leave room
// for that estimate's error and for one large row. MariaDB 10.6+ defaults to
// 16 MiB, MySQL 8 to 64 MiB. A store whose Options.MaxPayloadBytes is raised
// near max_allowed_packet needs a larger one. DSN also sets the driver's
// maxAllowedPacket=0, so that the driver learns the server's limit and
// refuses a larger statement itself (an error, not retried), instead of the
// server dropping the connection.
//
// # Changed rows, not matched rows
//
// The driver reports the rows an UPDATE changed, not those it matched, unless
// clientFoundRows=true is set (which the dialect cannot have, above): an
// UPDATE that writes the values a row already holds reports 0. The core never
// reads a lost owner or claim from such a count: every heartbeat also bumps
// processes.heartbeats, and Extend, Fail and Release go through the item's
// row lock and its token, not through a row count. The package's tests prove
// it with a database clock frozen on one instant, so that every heartbeat and
// extension writes the same times: none is taken for a lost owner or claim.
//
// # Types
//
// UUIDs are BINARY(16) (bound as their 16 bytes); times DATETIME(6), in UTC
// (TIMESTAMP ends in 2038 and converts through the session's time zone);
// JSON documents and long text LONGTEXT in utf8mb4 with a binary collation;
// booleans TINYINT(1); integers INT and BIGINT. Tables are InnoDB, whatever
// default_storage_engine says.
//
// Short strings (queue names, kinds, idempotency keys, barrier names, states)
// are VARBINARY, four bytes per character of the schema's limit: keys must
// compare byte for byte. Every utf8mb4 collation both servers have (utf8mb4_bin
// included) is PAD SPACE, under which 'k' and 'k ' are the same key, and the
// binary collations without padding have different names on the two servers
// (utf8mb4_0900_bin, utf8mb4_nopad_bin), which one generated file cannot name.
// Binary strings compare byte for byte, unpadded, on both. The core checks
// lengths in characters and UTF-8 validity first. (The MySQL 8 command-line
// client shows binary columns in hex; CAST(queue AS CHAR) reads them.)
//
// JSON is LONGTEXT rather than MySQL's JSON type: MySQL stores a JSON
// document in a binary form and gives back another text (keys reordered,
// spacing changed, duplicate keys merged), while MariaDB's JSON is LONGTEXT
// with a json_valid CHECK; LONGTEXT gives back the bytes that were stored, on
// both servers alike. The core validates documents before they get here, and
// the servers' JSON functions still read the column.
//
// # The database clock
//
// Now is UTC_TIMESTAMP(6): microseconds, the same for every statement of
// every session whatever its time_zone, fixed within a statement and moving
// between the statements of a transaction. SYSDATE(6) moves within a
// statement too, but keeps indexes from being used and is unsafe for
// statement-based binary logs; NOW(6) depends on the session's time_zone.
// Offsets (tests only) are DATE_ADD(UTC_TIMESTAMP(6), INTERVAL n MICROSECOND).
//
// # Errors and retries
//
// Classify makes two errors retryable, and nothing else: 1213 (deadlock; the
// server rolled the transaction back) and 1205 (lock wait timeout; the
// server rolled back only the statement, and the transaction still holds its
// locks). The core rolls the transaction back before it runs it again, which
// 1205 needs. Duplicate keys (1062, 1586) are UniqueViolation. A broken
// connection (the driver's invalid or bad connection, a network error, or
// the server's 1927 connection killed, 1053 shutdown, 4031 disconnected for
// inactivity, 2006/2013 as some proxies send them) is ConnectionLost, which
// the core turns into ErrCommitUnknown at commit.
//
// # When the network fails
//
// A server that stops answering without closing the connection (a
// partition that drops packets, a load balancer that forgot the flow)
// would leave a call waiting on the kernel's retransmissions, about 15
// minutes, or for ever where it waits for a reply with nothing left to
// send. Over TCP, Open bounds it (sqlkit.DefaultTCPBounds):
//
//   - the DSN's timeout (DialTimeout, 10 s, where it sets none): a dial;
//   - TCP keepalives (probes after 5 s of quiet, every 5 s) and, on Linux,
//     TCP_USER_TIMEOUT (15 s): a connection whose peer acknowledges
//     nothing for 15 s is closed, so a statement or commit on it fails, as
//     a lost connection, within about 20 s.
//
// The driver's readTimeout and writeTimeout are left unset: they would
// also cut short a statement that waits on a lock for longer
// (innodb_lock_wait_timeout is 50 s by default), which the probes do not.
// To set other bounds, open the *sql.DB yourself with a
// go-sql-driver Config whose DialFunc is a net.Dialer of your settings
// (sqlkit.TCPBounds.Dialer builds one).
//
// # Checked at open
//
// Check runs on one connection and refuses, naming the setting: a server
// older than MySQL 8.0.11 or MariaDB 10.6 (or TiDB); a DSN that names no
// database (table names are not qualified); a DSN without parseTime=true;
// a loc other than UTC (two DATETIMEs, in January and July, must read back as
// the same UTC instants); a connection character set other than utf8mb4
// (text would be converted on its way); a sql_mode without
// STRICT_TRANS_TABLES (the server would store coerced data with a warning);
// autocommit off; a max_allowed_packet below MinMaxAllowedPacket; binary
// logging with binlog_format=STATEMENT, under which InnoDB refuses READ
// COMMITTED writes (error 1665); a connection that cannot begin a READ
// COMMITTED transaction; and clientFoundRows.
//
// DSN (and so Open) sets parseTime=true, keeps loc=UTC, sets
// maxAllowedPacket=0, time_zone='+00:00' (so that NOW() in the application's
// own statements agrees with Plenum's UTC columns), a dial timeout, and
// interpolateParams=true unless the DSN sets it: one round trip per
// statement instead of three (prepare, execute, close), safe with the
// utf8mb4 connection character set that Check requires. It
// sets no read timeout: that would cut off legitimate waits (row locks, the
// application's statements inside a fence) and turn a slow commit into an
// unknown outcome; contexts bound waits instead.
//
// # Migrations
//
// DDL is not transactional on these servers: each CREATE commits on its own
// (Capabilities.TransactionalDDL is false). Each statement is atomic (MySQL
// 8's transactional data dictionary, MariaDB 10.6's atomic DDL), so a
// migration that stops half way leaves some statements done and the others
// not, and the migrator makes running it again complete it:
//
//   - the statements run one by one, outside a transaction, under a
//     migration lock (GET_LOCK, below); a version is marked as started
//     before its first statement and recorded only after all its
//     statements succeeded, so that migrations.Status shows one left half
//     done as partly applied (or partly rolled back);
//   - CREATE TABLE IF NOT EXISTS and DROP TABLE IF EXISTS run again
//     harmlessly;
//   - CREATE INDEX, DROP INDEX, ADD COLUMN and DROP COLUMN have no IF [NOT]
//     EXISTS on MySQL 8 (MariaDB has them, but one file must serve both
//     servers), so the dialect implements dialect.IndexProber and
//     dialect.ColumnProber: before each change the migrator asks
//     information_schema (STATISTICS, COLUMNS) whether it is done, and
//     skips it if so; data steps are written to run again.
//
// So after a failure, run Apply (or Down) again: plenum migrate up, or
// core.Open with Options.Migrate.
// The generated SQL files hold the same statements; a migration tool runs a
// file once, so a file that failed half way cannot simply be run again (its
// first CREATE INDEX would fail as a duplicate): complete it with Apply, or
// drop the objects it created and run it again.
//
// The migration lock is GET_LOCK on the migrator's connection. GET_LOCK names
// are server-wide, so the name is qualified with the current database (and
// hashed when longer than the 64 characters MySQL allows). Lock waits at most
// a second per call, so that it notices an ended context; when the context
// ends during a call, the driver closes the connection and the server
// releases the session's locks with it.
//
// # Not verified on MySQL 8
//
// The package's tests ran against MariaDB 10.11; the MySQL 8 conformance test
// runs where PLENUM_MYSQL8_DSN names a server (TestConformance_MySQL8), and
// the containers module (containers/) runs it on MySQL 8.4 where Docker
// answers. What rests on MySQL's documentation alone: SKIP LOCKED
// (since 8.0.1) and the locking clause not reaching subqueries; the absence of
// CREATE INDEX IF NOT EXISTS; the claim's plan (the EXPLAIN test asserts it
// on whichever server it meets, but its output was seen on MariaDB only);
// error numbers 1205, 1213, 1062 and 4031 as the driver reports them; the
// TEMPORARY-table probe under GTID consistency and sql_require_primary_key
// (the table has a primary key and is created outside a transaction); a
// VIRTUAL generated column and a unique index on it added by one ALTER TABLE;
// and that EXPLAIN accepts the claim with bound parameters.
package mysql
