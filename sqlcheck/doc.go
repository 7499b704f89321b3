// Package sqlcheck checks the statements of the dialects whose servers
// do not run in Plenum's CI, Oracle, CockroachDB and MySQL 8, against
// those servers' own grammars, so that a syntax error cannot reach a user of
// them. It is a module of its own (sqlcheck/go.mod, with the parent
// module replaced by ../), used only by its tests, so that a user of
// Plenum never downloads the parsers. CI runs it (.ci/run) with the DSNs
// of the local PostgreSQL and MariaDB; PLENUM_REQUIRE makes an unreachable
// one a failure, as for the parent module's tests.
//
// # The grammars and the rules beyond them
//
// Oracle: the PL/SQL grammar of github.com/bytebase/parser (package
// plsql, on bytebase's fork of the ANTLR runtime), with the 12c and later
// syntax on (OracleSyntax). The dialect's DDL is a PL/SQL block that runs
// the statement with EXECUTE IMMEDIATE and ignores exactly the error of a
// statement already run; the grammar sees only a string there, so the
// statement inside each block is parsed too (OracleInnerDDL, CheckOracle).
// OracleTraps adds what a grammar does not see: FOR UPDATE in a statement
// that limits its rows with FETCH FIRST or ROWNUM (ORA-02014, or every
// matching row locked), IN lists over 1,000 values (ORA-01795),
// identifiers over 128 bytes, and columns of a CREATE TABLE or ALTER TABLE
// ... ADD named by a reserved word of SQL or PL/SQL.
//
// CockroachDB: github.com/cockroachdb/cockroachdb-parser v0.25.2, the
// server's own parser as a library (ParseCockroach). Beyond parsing, the
// checks read the trees: every claim, an UPDATE whose rows come from a
// SELECT of the same table with ORDER BY and LIMIT (in a CTE or a
// subquery), must lock those candidates FOR UPDATE SKIP LOCKED
// (CheckCockroach); the generated DDL must create every table and index of
// the schema, hash-shard (USING HASH) exactly the primary keys of one UUID
// column and the indexes the schema marks Sequential, and keep partial
// indexes partial, with predicates on the columns of the schema's
// conditions (CheckCockroachSchema).
//
// MySQL 8: the sqlparser of vitess.io/vitess v0.24.4 at server version
// MySQLVersion, with ParseStrictDDL: its plain Parse accepts a DDL
// statement it cannot read as a partial one and silently drops the rest
// (a WHERE on a CREATE INDEX, say). The grammar refuses what MariaDB runs
// and MySQL 8 does not: RETURNING, partial indexes, CREATE INDEX IF NOT
// EXISTS. CheckMySQL8 adds the rules of MySQL 8 a grammar does not see:
// system variables, information_schema tables and functions MySQL 8.0
// removed (tx_isolation, tx_read_only, the query cache, GLOBAL_VARIABLES,
// PASSWORD(), ...), and error 1093: a subquery that reads the table an
// UPDATE or DELETE changes, other than through a derived table MySQL
// materializes (MariaDB 10.3 and later run such updates, so passing the
// suite there proves nothing). As on CockroachDB, a claim's candidates (a
// locking SELECT with ORDER BY and LIMIT) must be FOR UPDATE SKIP LOCKED.
//
// # Which statements are checked
//
//  1. Every statement of every generated migration file,
//     migrations/<dialect>/*.sql, up and down, for every dialect directory
//     present: a new version is checked as soon as go generate writes it,
//     and a directory of a dialect with no grammar here (other than sqlite
//     and postgres, whose servers run in CI) fails the test. The cockroach
//     files' facts are checked against the schema as well.
//     The oracle files are split at a ';' that ends a line before a blank
//     one (SplitOracleFile), since a block holds ';' of its own.
//
//  2. Every statement that reaches the server while the whole conformance
//     suite runs: with the cockroach dialect against the local PostgreSQL,
//     every session serializable (as CockroachDB's are), and with the
//     mysql dialect against the local MariaDB. The statements are recorded
//     by a Recorder, a proxy in front of the server that reads the wire
//     protocol, so the record holds whatever reached the server, whoever
//     wrote it: the core's statements, the dialect's, the driver's own
//     (pgx's "begin isolation level serializable", go-sql-driver's "SET
//     TRANSACTION ISOLATION LEVEL READ COMMITTED"), the suite's own
//     checks, and those of sessions a dialect opens itself (the cockroach
//     lock's). A database/sql driver wrapped around the real one would miss
//     the driver's own statements and the lock's session, and would hide
//     the *stdlib.Conn that the cockroach dialect's Check and Lock insist
//     on. The recorded texts are normalised (Normalize: table prefixes,
//     numbered placeholders, IN lists, the rows of a multi-row VALUES,
//     LIMIT and clock-offset counts) and deduplicated before parsing: the
//     11,000 to 16,000 statements of a run come down to 110 to 140 shapes
//     per dialect.
//
//  3. What the dialects and the CLI write themselves, recorded the same
//     way, inside the suite's run or in a run of their own after it: the
//     cockroach dialect's own Check (every probe, against PostgreSQL: the
//     run's schema has a version() function that says CockroachDB, found
//     before pg_catalog's), its Begin, its lock table and lock, its drop;
//     the mysql dialect's Check (the temporary probe table included), its
//     Begin, GET_LOCK and RELEASE_LOCK, index probes and drop; plenum
//     inspect on both; plenum bench and migrations up on MySQL. On
//     PostgreSQL bench runs with the postgres dialect (see below), through
//     a Recorder of its own, and its statements are checked with
//     CockroachDB's grammar too.
//
//  4. Oracle's, which no server here can stand in for: the dialect's DDL
//     and data steps of every version, up and down, as the migrator runs
//     them; its claim block and the read after it at sizes 1, 2 and 1,000;
//     its MERGE at 1, 2 and 200 rows; Begin, the DBMS_LOCK lock and the
//     probes; the migrator's own statements (its lock, the reads of the
//     applied versions, the probes, the started mark and the version rows)
//     up from an empty schema and down from a full one; and the core's
//     statements as a store renders them for
//     Oracle, each operation of its API run once on a database/sql driver
//     that records what it is sent and answers with canned rows (an
//     operation stops at its first failure on those answers, so a
//     statement only a later step sends is not reached).
//
//  5. Every statement of the statement catalog (package
//     github.com/plenumdb/plenum/internal/catalog: catalog.New, whose
//     Statements renders each template core and the browse package send
//     exactly as a store sends it), for the cockroach and mysql dialects, at sizes 1, 2 and
//     the largest the store sends (the bind-parameter and batch limits),
//     with and without a clock offset (TestCatalog_Cockroach,
//     TestCatalog_MySQL8): the statements and sizes the suite's run does
//     not reach are checked too.
//
// # Knowing the set is complete
//
// After each recorded run, every recorded statement that uses a store's
// tables (FROM, INTO, UPDATE or JOIN of <prefix>items, processes, barriers,
// attempts, queues or schedules) must be the rendering of a catalog entry,
// for the prefix it names and the clock offset it carries (Catalog.Match),
// or one of the migrations' statements for that prefix
// (migrations.Statements), or a shape listed in notCore with what sends it
// (the CLI's inspect, the suite's own writes). Anything else fails
// (checkRecordedInCatalog): a template the core sends without a catalog
// entry is found by the suite's first statement that reaches it. The
// statements that use no store table are the dialect's own (Check, Begin,
// the lock, probes of information_schema, and the postgres notifier's
// pg_notify and LISTEN, which the dialect sends, not the core), the
// drivers' and the migrator's version table: they are checked by items 2
// and 3, and not looked up in the catalog.
//
// A dialect with no server here (Oracle) can enumerate a store's
// statements the same way: catalog.New(d, core.Options{}) and
// Statements(1, 2, catalog.LargestSize), each statement with its
// template's Name and Size; the dialect's Claim is rendered by running it against a
// stand-in connection that gives it rows, so every step of a multi-step
// claim is in the catalog.
//
// Each check is shown to bite. Planted statements are refused: MERGE, a
// misspelt SKIP LOKED, a claim without SKIP LOCKED or without a lock, a
// Sequential index or a UUID key without USING HASH, a partial index
// without its predicate on CockroachDB; a partial index, INSERT, UPDATE
// and DELETE ... RETURNING, CREATE INDEX IF NOT EXISTS, tx_isolation, a
// 1093 subquery, a claim without SKIP LOCKED on MySQL 8; FOR UPDATE with
// FETCH FIRST or under a ROWNUM filter, a misspelt SKIP LOKED, an IN list
// of 1,001, LIMIT, ADD COLUMN, a reserved word as a column, alone and
// inside a DDL block, on Oracle. Some of them are also run for real on the
// stand-in server through the Recorder, which accepts them, and the
// recorded statements are refused.
//
// # What is not covered
//
//   - The cockroach DDL with USING HASH runs only where a real CockroachDB
//     does (PostgreSQL refuses it): here its statements are checked from
//     the generated files, and the stand-in runs PostgreSQL's DDL (whose
//     recorded statements parse on CockroachDB too). For the same reason
//     plenum bench and plenum migrations up are not run with the cockroach
//     dialect. Bench's statements are built from dialect methods the
//     cockroach dialect takes unchanged from the postgres one, so bench
//     runs with the postgres dialect instead: what differs on CockroachDB,
//     Begin's isolation and the fences' lock strength, is what the suite's
//     record covers. The postgres dialect's notifier (pg_notify, LISTEN),
//     which the cockroach dialect does not take (CockroachDB has no
//     LISTEN or NOTIFY), is left out of bench's check.
//   - No Oracle statement has run on a server: what the grammar accepts
//     may still fail there (a type mismatch, a privilege, an optimizer
//     that ignores the claim's index).
//   - A grammar accepts a statement that names a column or function the
//     server lacks, a type it cannot convert, or a plan it refuses at run
//     time; only a real server sees those (the cockroach and mysql
//     packages run the suite against one where Docker answers or a DSN
//     names one).
//   - Paths no run here takes: statements sent only on errors the stand-ins
//     never raise, and statements of a dialect's Check that it sends only
//     on a server kind other than the stand-in's (the mysql dialect sends
//     the same statements to MySQL and MariaDB).
//   - The Recorder reads PostgreSQL's and MySQL's protocols without TLS
//     or compression, and MySQL's COM_QUERY without query attributes
//     (which MariaDB does not support; against MySQL 8 it would need to
//     skip them).
package sqlcheck
