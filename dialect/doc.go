// Package dialect is the contract between Plenum's database-agnostic core and
// one SQL database.
//
// The core writes every statement that is the same on all databases once, with
// '?' placeholders, and asks the dialect for the pieces that differ. Dialect
// is the union of parts, each one role:
//
//   - Describer: the dialect's name and the facts about its database
//     (Capabilities); everything the core shapes differently without
//     asking for SQL is a flag there.
//   - Syntax: the pieces of a statement, the placeholder style (Rebind,
//     Param), the database clock (Now, AddMicros), the end of a SELECT
//     (Limit) and insert-or-ignore (InsertIgnore).
//   - Binder: how values are bound and read back (UUID, JSON, Bool,
//     ScanTime).
//   - Transactor: the settings a connection must have (Check), how a
//     transaction begins (Begin) and the claim statement (Claim).
//   - Classifier: what an error means to the core (Classify).
//   - DDL: the schema's statements (CreateTable, CreateIndex, DropTable,
//     DropIndex, AddColumn, DropColumn).
//   - Locker: the migrator's lock across processes (Lock).
//
// Schema (Describer, Syntax and DDL) is what the migration generator asks
// for. The core never asks a dialect for its name to decide what to do: a
// new database is one package that implements Dialect and passes the
// conformance suite.
//
// What is stable: the method set of Dialect and of each of its parts, and
// of the optional interfaces, changes only in a major version, since every
// dialect outside this module would break. A new need arrives as an
// optional interface, which the core finds by type assertion and does
// without where a dialect lacks it, as database/sql finds the optional
// interfaces of database/sql/driver; so are Notifier, Purger, UUIDLister,
// KeyLister, KeyLockLister, RowLocker, TextBinder, RefusalClassifier and the migrator's
// TableProber, IndexProber, ColumnProber and Noter.
// The kit that helps write a dialect, package dialect/sqlkit (the shared
// DDL shapes, placeholder rewriting, ConnTx, IsConnectionLost, ...), is no
// part of the contract: a dialect may use as much of it as suits it.
//
// Writing a dialect: implement Dialect in one package; register it once,
// from init, with a Registration (the Dialect, an Open that turns a DSN
// into a ready *sql.DB, and what its DSNs look like: see Register); add the
// package's import to dialect/builtin, which the CLI and the migration
// generator link (go generate ./migrations then writes its SQL, and every
// CLI command can open it); and run conformance.Run from the package's test
// against a real server. The contract's sharp edges:
//
//   - Syntax.Now must move between statements of one transaction, and
//     should hold still within one statement (PostgreSQL's
//     statement_timestamp(): not now(), frozen for the transaction, nor
//     clock_timestamp(), which stamps the rows of one insert apart); every
//     gating time is computed with it.
//   - Syntax.InsertIgnore's rows affected must be exactly the rows
//     inserted: the core counts fan-out children and learns duplicate keys
//     from it.
//   - Transactor.Claim must take only rows no other transaction holds
//     (SKIP LOCKED) and lock only those; where it needs several statements
//     (no UPDATE ... RETURNING), it returns the rows of the last. Parsing
//     the words is not enough: the migrator and a worker's Start prove it
//     on the live database, a second session's claim taking the other of
//     two rows while a first session's claim holds one, and refuse, with a
//     SkipLockedError, a database whose claim takes the held row too or
//     waits for it. A database of one writer says so with
//     Capabilities.SingleWriter and is not probed.
//   - The core never relies on the row count of an UPDATE that may leave
//     every value as it was, so databases that count changed rows (MySQL)
//     need no special setting.
//   - Transactor.Begin chooses the isolation level: READ COMMITTED where
//     claims under stricter levels fail or deadlock; a database that is
//     serializable only must classify its serialization failures as
//     Retryable, and the core runs the whole transaction again.
//   - Classifier.Classify must report a connection lost as ConnectionLost
//     (sqlkit.IsConnectionLost knows what every driver shares): at commit
//     that becomes ErrCommitUnknown instead of a blind retry.
//   - Where DDL is not transactional, a migration that failed half way is
//     completed by running it again, so every DDL statement must be safe
//     to run again after it succeeded: IF [NOT] EXISTS where the database
//     has it, else the dialect implements the probers (TableProber,
//     IndexProber, ColumnProber) and the migrator skips what is already
//     done.
package dialect
