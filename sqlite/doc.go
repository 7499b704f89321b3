// Package sqlite is Plenum's dialect for SQLite, through the pure Go driver
// modernc.org/sqlite (driver name "sqlite"). Importing it registers the
// dialect under the name "sqlite".
//
// Open a database with Open, which puts every setting the dialect depends on
// into the DSN; a *sql.DB opened otherwise must carry them too, and Check
// (run by the store at open) refuses it when it does not.
//
// # Choices
//
// SQLite runs one write transaction at a time, so there are no row locks to
// skip: a claim is one atomic UPDATE ... WHERE id IN (SELECT ... ORDER BY ...
// LIMIT n) RETURNING inside an immediate transaction. The rows RETURNING
// yields come in no particular order.
//
// Write transactions begin with BEGIN IMMEDIATE on a connection of their own,
// whatever _txlock the DSN says. Before that, writers of the same *sql.DB in
// this process queue on an in-process semaphore, so that they wait in a Go
// channel instead of polling in SQLite's busy handler, whose sleeps waste
// most of the throughput when many goroutines contend. They take their
// turns in order, but for an urgent transaction (dialect.TxOptions.Urgent:
// a heartbeat), which goes before every other waiting, so that a worker
// busy with its own writes is not taken for dead. The wait honours the
// context and gives up after ten seconds with ErrWriterQueueTimeout, which
// Classify reports as retryable. Writers in other processes, or on another
// *sql.DB, still meet in SQLite's busy handler, bounded by busy_timeout.
// Read-only transactions begin deferred and never queue.
//
// On a *sql.DB that Open opened, whose DSN has _txlock=immediate, the
// transactions are database/sql's own (BEGIN IMMEDIATE for a write), and
// the statements they run with arguments are prepared once per connection
// and reused: modernc.org/sqlite otherwise parses and plans every
// statement it runs. A batch's ids are bound as one BLOB of their 16 bytes
// each (dialect.UUIDLister), so that such a statement's text does not
// change with the batch's size.
//
// Times are stored as INTEGER microseconds since the Unix epoch (UTC), so that
// they compare like with like; UUIDs as 16-byte BLOBs; JSON as TEXT; booleans
// as INTEGER 0/1.
//
// # Crashes
//
// A process killed in the middle of a write transaction (SIGKILL, the
// kernel's out-of-memory killer) leaves the file and its write-ahead log
// as they were: the next process to open the file rolls the unfinished
// transaction back, and sees every transaction committed before the kill
// (synchronous=NORMAL in WAL mode loses none to a process's crash; a loss
// of power may lose the last few, never corrupting the file). Starting the
// worker again on the same file resumes: its reaper releases the dead
// process's claims as crashes, using no attempt, once the dead owner's
// last heartbeat is StaleAfter old, and a fenced effect was made together
// with its completion or not at all.
//
// # Traps
//
//   - A deferred transaction that later writes gets SQLITE_BUSY at once when
//     another connection wrote since it began, even with busy_timeout: the
//     busy handler is not called for that upgrade. Hence BEGIN IMMEDIATE for
//     every transaction that may write.
//   - The database clock ('now') has millisecond resolution, and stays the
//     same within one statement; it moves between statements of a
//     transaction. Capabilities.ClockResolution says so.
//   - One writer at a time: a pool of many connections buys nothing for
//     writes, and a long write transaction (a long Fence) holds the only
//     writer and stalls everyone else, heartbeats included. Heartbeat and
//     lease timeouts must be far above busy_timeout plus the longest fence.
//   - A transaction that opens a second write transaction on the same
//     *sql.DB waits for itself: the second one queues behind the first until
//     the queue's bound, then fails as retryable.
//   - An in-memory or temporary database is private to one connection, so a
//     pool would see several unrelated databases: Check refuses it.
//   - SQLite 3.35 or later (MinVersion: RETURNING, ALTER TABLE DROP
//     COLUMN); Check refuses older. The clock is julianday('now') in whole
//     milliseconds, not unixepoch('subsec'), which needs 3.42: the
//     generated migration files use the clock too, and run on the SQLite
//     of other tools (golang-migrate's, Debian's sqlite3).
package sqlite
