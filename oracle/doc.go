// Package oracle is Plenum's dialect for Oracle Database 19c and 23ai,
// through the pure-Go driver github.com/sijms/go-ora/v2 (driver name
// "oracle"). It writes nothing that only 23ai accepts. Importing it
// registers the dialect under the name "oracle".
//
// Open a database with Open (a go-ora URL,
// oracle://user:password@host:1521/service). Check, which the store runs at
// open, refuses another driver, a server older than 19c and a database
// character set other than AL32UTF8.
//
// Nothing in this package has run against an Oracle server: none is
// reachable where it was written. What is verified is verified without one:
// the rendered statements (unit tests here), their syntax against an
// Oracle PL/SQL grammar (the sqlcheck module), and error classification
// with go-ora's error type. The conformance test runs where
// PLENUM_ORACLE_DSN names a server, and in the containers module
// (containers/) where a Docker engine can start gvenzl/oracle-free.
//
// # When the network fails
//
// A server that stops answering without closing the connection (a
// partition, a load balancer that forgot the flow) would leave a call
// waiting on the kernel's retransmissions, about 15 minutes, or for ever
// where it waits for a reply with nothing left to send. Open dials through
// go-ora's connector with sqlkit.DefaultTCPBounds: a new connection within
// 10 s (go-ora alone: 60 s; CONNECTION TIMEOUT in the DSN, in seconds,
// sets it), then TCP keepalives (5 s quiet, every 5 s) and, on Linux,
// TCP_USER_TIMEOUT 15 s, so a call on a dead connection fails within
// about 20 s. go-ora's TIMEOUT (a deadline on every read) is left to the
// DSN: it would cut a long statement short too. For other bounds, open the
// *sql.DB yourself: sql.OpenDB of go_ora.NewConnector(dsn) after its
// Dialer(sqlkit.TCPBounds{...}.Dialer()). Like the rest of the package,
// this was not run against an Oracle server cut off from its client: the
// unit tests check the bounds Open builds from the DSN.
//
// # Claims
//
// Oracle refuses FOR UPDATE in a query block that limits its rows with
// ROWNUM or FETCH FIRST (ORA-02014), and a ROWNUM filter wrapped around a
// locking query locks every row the inner query matches. A FOR UPDATE
// cursor without SKIP LOCKED locks its whole result when it is opened
// (PL/SQL Language Reference, "SELECT FOR UPDATE and FOR UPDATE Cursors");
// with SKIP LOCKED, rows are locked as they are fetched, and rows another
// transaction holds are passed over (SQL Language Reference, SELECT,
// for_update_clause). A client that fetches from such a cursor prefetches
// (go-ora: 25 rows by default), locking rows it never reads, and a fetch
// outside a transaction fails with ORA-01002. So a claim is a PL/SQL
// block, run in the caller's transaction, that fetches on the server
// exactly the rows it takes:
//
//	DECLARE
//	  TYPE plenum_keys IS TABLE OF items.id%TYPE;
//	  picked plenum_keys;
//	  taken plenum_keys := plenum_keys();
//	  packed RAW(16000);
//	  CURSOR pick IS SELECT id FROM items WHERE <seek> AND <filter>
//	    ORDER BY <claim index expressions> FOR UPDATE SKIP LOCKED;
//	BEGIN
//	  OPEN pick;
//	  FETCH pick BULK COLLECT INTO picked LIMIT n;
//	  CLOSE pick;
//	  IF picked.COUNT > 0 THEN
//	    FORALL i IN 1 .. picked.COUNT
//	      UPDATE items SET <claim> WHERE id = picked(i) AND state = 'available'
//	      RETURNING id BULK COLLECT INTO taken;
//	  END IF;
//	  <packed := the taken ids, 16 bytes each>
//	  :out := packed;
//	END;
//
// FETCH ... BULK COLLECT ... LIMIT n fetches at most n rows (PL/SQL
// Language Reference, "FETCH Statement"), so at most n rows are locked; the
// UPDATE re-checks the claimable state; the ids come back in one RAW OUT
// bind (go-ora's Out with a size), and a second statement, SELECT ... WHERE
// id IN (...) ORDER BY priority, available_at, id, returns the claimed rows
// to the core (at most 1,000: MaxInList bounds the claim). Two claimers
// asking for n of 2n rows each get n. The core's filter, and so the
// cursor, holds the paused-queue test, NOT EXISTS (SELECT 1 FROM queues qs
// WHERE qs.name = ? AND qs.paused = ?): a subquery in the WHERE clause of a
// FOR UPDATE query locks no row of the queues table (only the tables of the
// FROM clause are locked), so a claim never waits on a pause.
//
// # Wake-ups
//
// The dialect does not implement dialect.Notifier: Oracle has no LISTEN and
// NOTIFY (DBMS_ALERT and Advanced Queuing would need their own objects,
// privileges and a session held waiting), so workers in other processes
// find new items by polling, and wake-ups reach only the workers of the
// process that enqueued. A lost wake-up costs latency, never an item.
//
// # Indexes without partial indexes
//
// Oracle does not store an index entry whose key columns are all NULL, so a
// function-based index whose expressions are NULL for rows outside a
// condition is partial. The claim index (queue, priority, available_at, id)
// WHERE state = 'available' is one CASE WHEN state = 'available' THEN
// column END per column: it holds only claimable rows. The optimizer uses a
// function-based index only for a query that repeats its expressions, so
// the claim's cursor compares CASE WHEN state = 'available' THEN queue END
// with the queue and orders by the other three expressions (from
// ClaimSpec.Seek, the same index the DDL renders), besides the core's
// filter as written; a test checks the two texts are the same.
//
// Oracle compares unique keys whose non-NULL parts are equal even when
// other parts are NULL, so a unique index on (queue, unique_key) would make
// every keyless item of a queue collide. The key index is (unique_key, CASE
// WHEN unique_key IS NOT NULL THEN queue END): entirely NULL, and so not
// stored, for keyless rows, unique among keyed ones, and led by a plain
// column that the core's lookups by key can use. The other partial indexes
// (leases, owners, a barrier's children, unfired barriers) become composite
// indexes led by their condition's column, as on MySQL, which the core's
// statements can use as written.
//
// # Insert-or-ignore
//
// InsertIgnore is a MERGE ... WHEN NOT MATCHED THEN INSERT over the rows
// selected from DUAL, keeping the first row of each key (two rows of one
// statement with the same key would otherwise both insert and fail). Rows
// affected is the number of rows inserted, and the core learns which rows
// were new by comparing the ids it made with those it finds by key. A MERGE
// does not see a row with the same key that another transaction commits
// while it runs, and then fails with ORA-00001: Classify makes ORA-00001 on
// the schema's unique indexes (the ones a MERGE guards) retryable, and the
// transaction runs again and finds the row; ORA-00001 on any other
// constraint is a UniqueViolation.
//
// # Types and values
//
// UUIDs are RAW(16); times TIMESTAMP(6) holding UTC, and the clock is
// SYS_EXTRACT_UTC(SYSTIMESTAMP) (the server's clock, per statement, as a
// UTC instant: no session or server time zone takes part), so comparisons
// are UTC with UTC; booleans NUMBER(1) checked to 0 or 1; JSON a CLOB with
// an IS JSON check, bound as a string up to 4,000 bytes and as a temporary
// CLOB above (a longer string would travel as LONG, which a MERGE's source
// refuses), with TO_CLOB(?) in a row so every row gives it one type.
// Text bound where it is an expression (the error text in the SELECT list
// of the attempts' INSERT ... SELECT, the core's {text?}) is bound the same
// way, TO_CLOB(?) with a string or, above 4,000 bytes, a CLOB: the dialect
// is a dialect.TextBinder. Oracle
// stores the empty string as NULL: the columns that may hold the empty string (an item's
// kind, a join's kind, an owner's host) are nullable here, and the core
// reads their NULL as "". Identifiers are unquoted lower-case names (Oracle
// keeps them in upper case), at most 39 bytes with the longest table prefix
// (Oracle 12.2 and later allow 128), and no column is an Oracle SQL or
// PL/SQL reserved word (a test checks every one).
//
// # Errors and retries
//
// ORA-00060 (deadlock) rolls back only the statement that met it; the core
// rolls the whole transaction back before it runs it again. ORA-00060,
// ORA-08177, ORA-00054 and ORA-30006 are Retryable; a session that is gone
// (ORA-03113, ORA-03135, ORA-00028, TNS errors, a broken connection) is
// ConnectionLost, which at commit is core.ErrCommitUnknown.
//
// # Migrations
//
// DDL commits on its own (Capabilities.TransactionalDDL is false) and 19c
// has no IF NOT EXISTS: every CREATE is a PL/SQL block that runs the DDL
// with EXECUTE IMMEDIATE and ignores ORA-00955 (the object exists), every
// DROP TABLE one that ignores ORA-00942, ADD (a column) ORA-01430 (the
// column exists), DROP INDEX ORA-01418 and DROP COLUMN ORA-00904 (no such
// index, no such column), so the migrator completes a version that failed
// half way, or undoes one, when it runs again; it also probes tables,
// indexes and columns first (TableExists, IndexExists, ColumnExists) and
// skips what is done. A column that may hold the empty string is nullable
// when it is added too. A data step (version 2's backfill) runs on its own
// like the DDL, outside a transaction, and is written to be safe to run
// again. The generated files hold
// these blocks, each ending with ';'; SQL*Plus needs a '/' line after each.
//
// The migration lock is DBMS_LOCK.REQUEST on the migrator's session, with
// release_on_commit false: a session lock, which the implicit commits of
// DDL do not release. The user needs EXECUTE on SYS.DBMS_LOCK.
//
// # Not verified on a server
//
// Everything above rests on Oracle's documentation and on go-ora v2.9.0's
// source, and none of it has run. In particular: that a SKIP LOCKED cursor
// locks only the rows BULK COLLECT ... LIMIT n fetches; that the optimizer
// reads the function-based claim index in ORDER BY order for the cursor
// (an EXPLAIN PLAN test belongs with the conformance run on a server); that
// a MERGE whose source is a UNION ALL of SELECTs from DUAL with TO_CLOB
// binds, over a concurrent MERGE of the same key, fails with ORA-00001
// naming the index (and not ORA-08177 or a wait); go-ora's RAW OUT bind of
// 16,000 bytes and its NUMBER OUT bind; a temporary CLOB bound inside
// TO_CLOB in a MERGE; SET TRANSACTION as the first statement of go-ora's
// transaction; that go-ora reports a lost session at commit as one of the
// errors Classify maps to ConnectionLost; the error numbers themselves
// (those the DDL blocks ignore included); that LIKE on a CLOB in
// version 2's backfill behaves as = does on shorter text; that the
// attempts' INSERT ... SELECT, grouped by item, takes TO_CLOB of a bind (a
// CLOB above 4,000 bytes) in its SELECT list beside the MAX it groups; and
// that the claim's NOT EXISTS on the queues table leaves the cursor's plan
// on the claim index.
package oracle
