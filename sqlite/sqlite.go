package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	msqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
)

// DriverName is the database/sql driver name of modernc.org/sqlite.
const DriverName = "sqlite"

// Name is the dialect's registered name.
const Name = "sqlite"

// BusyTimeout is the busy_timeout Open sets: how long a statement waits for
// a lock held by another connection before it fails with SQLITE_BUSY.
const BusyTimeout = 10 * time.Second

// WriterQueueTimeout bounds how long Begin waits for the other write
// transactions of the same *sql.DB to finish.
const WriterQueueTimeout = 10 * time.Second

// minBusyTimeout is the smallest busy_timeout Check accepts, in ms.
const minBusyTimeout = 1000

// nowExpr is the database clock in whole microseconds (see Now). 2440587.5
// is the Julian day of the Unix epoch.
const nowExpr = "CAST(ROUND((julianday('now') - 2440587.5) * 86400000) AS INTEGER) * 1000"

// MinVersion is the oldest SQLite the dialect supports: 3.35.0 brought
// RETURNING (the claim) and ALTER TABLE DROP COLUMN (the down migrations).
// Check refuses older libraries.
const MinVersion = "3.35.0"

func init() {
	dialect.Register(dialect.Registration{
		Dialect:    Dialect(),
		Open:       Open,
		DSN:        dialect.DSNForm{Example: "./jobs.db", File: true, Schemes: []string{"file"}, Recognize: isFileDSN},
		Checkpoint: Checkpoint,
		Version:    serverVersion,
	})
}

// serverVersion names the SQLite library the driver embeds.
func serverVersion(ctx context.Context, db *sql.DB) (string, error) {
	var v string
	if err := db.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&v); err != nil {
		return "", fmt.Errorf("sqlite: version: %w", err)
	}
	return "SQLite " + v, nil
}

// Checkpoint empties the write-ahead log into the database file
// (PRAGMA wal_checkpoint(TRUNCATE)) and shrinks the log to nothing, so that
// the writes that follow do not start by reusing, or first checkpointing, a
// long log. A benchmark runs it between measurements.
func Checkpoint(ctx context.Context, db *sql.DB) error {
	if db == nil {
		return errors.New("sqlite: checkpoint: nil *sql.DB")
	}
	if _, err := db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return fmt.Errorf("sqlite: checkpoint: %w", err)
	}
	return nil
}

type sqliteDialect struct {
	// writerWait bounds the wait in the writer queue; tests shorten it.
	writerWait time.Duration
}

var theDialect = &sqliteDialect{writerWait: WriterQueueTimeout}

// Dialect returns the SQLite dialect. It is stateless apart from the
// process-wide writer queues, and safe for concurrent use.
func Dialect() dialect.Dialect { return theDialect }

// DSN returns the modernc.org/sqlite data source name for the database file
// at path, with every setting the dialect depends on: a busy timeout, WAL
// journaling (readers do not block the writer), synchronous=NORMAL (safe
// under WAL, and much faster than FULL) and immediate transactions for
// db.BeginTx. The path is escaped for SQLite's URI syntax. An empty path and
// ":memory:" are refused, since such a database is private to one
// connection, and so is a "file:" URI, whose settings would clash.
func DSN(path string) (string, error) {
	if path == "" {
		return "", errors.New("sqlite: empty database path (give a file path; in-memory databases are not supported)")
	}
	if k := sqlkit.DSNKind(path); k != "" && k != Name {
		return "", fmt.Errorf("sqlite: the path is a DSN written for %s, not a file path: open it with the %s dialect, or give the SQLite database's file path", k, k)
	}
	if path == ":memory:" || strings.HasPrefix(path, "file:") {
		return "", fmt.Errorf("sqlite: %q is not a file path (give a file path; in-memory databases and URIs are not supported)", path)
	}
	if strings.IndexByte(path, 0) >= 0 {
		return "", errors.New("sqlite: database path contains a NUL byte")
	}
	p := filepath.ToSlash(path)
	if filepath.VolumeName(path) != "" {
		p = "/" + p // a Windows drive: file:///C:/dir/db
	}
	escaped := (&url.URL{Path: p}).EscapedPath()
	if strings.HasPrefix(p, "/") {
		// An empty authority, so that a path starting with // is not read
		// as a host name.
		escaped = "//" + escaped
	}
	ms := BusyTimeout.Milliseconds()
	return "file:" + escaped + "?_pragma=busy_timeout(" + strconv.FormatInt(ms, 10) + ")" +
		"&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate", nil
}

// Open opens the SQLite database file at path (creating it if needed) with
// the DSN that DSN returns, and pings it so that a path that cannot be opened
// fails here rather than at first use. The write transactions that Begin
// starts on a database Open opened run the statements they take arguments
// for prepared once per connection and reused (see stmtCache).
//
// The pool opens at most dialect.DefaultMaxOpenConns (25) connections at
// once, each a file handle and a page cache of its own: readers share the
// file at once under WAL, and writers wait for their turn in Begin without
// holding a connection.
// database/sql's idle and lifetime settings are left as they are. Set
// another bound with db.SetMaxOpenConns before handing db to core.Open
// (worker.MinOpenConns says what a worker needs; 0 removes the bound).
func Open(path string) (*sql.DB, error) {
	dsn, err := DSN(path)
	if err != nil {
		return nil, err
	}
	conn, err := msqlite.NewConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %q: %w", path, err)
	}
	drv := &openedDriver{Driver: conn.Driver(), stmts: newStmtCache()}
	db := sql.OpenDB(&openedConnector{Connector: conn, drv: drv})
	db.SetMaxOpenConns(dialect.DefaultMaxOpenConns)
	drv.stmts.db = db
	ctx, cancel := context.WithTimeout(context.Background(), BusyTimeout+5*time.Second)
	defer cancel()
	// Switching a brand-new file to WAL takes an exclusive lock and does not
	// wait on busy_timeout, so processes opening the same new file together
	// can get SQLITE_BUSY at once: wait and try again, within BusyTimeout.
	for {
		err := db.PingContext(ctx)
		if err == nil {
			return db, nil
		}
		if theDialect.Classify(err) != dialect.Retryable || ctx.Err() != nil {
			db.Close()
			if dir, missing := missingDir(path); missing {
				return nil, fmt.Errorf("sqlite: open %q: there is no directory %s: SQLite makes the database file, not the directories it goes in: %w", path, dir, err)
			}
			return nil, fmt.Errorf("sqlite: open %q: %w", path, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// missingDir reports the directory the database file at path would go
// in when it does not exist: SQLite then says only "unable to open
// database file".
func missingDir(path string) (string, bool) {
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return dir, true
	}
	return "", false
}

// Name returns "sqlite".
func (d *sqliteDialect) Name() string { return Name }

// Capabilities describes SQLite: one writer, RETURNING, transactional DDL,
// a millisecond clock.
func (d *sqliteDialect) Capabilities() dialect.Capabilities {
	return dialect.Capabilities{
		SingleWriter:      true,
		ReturningUpdate:   true,
		RecursiveScan:     true,
		LockClause:        "",
		TransactionalDDL:  true,
		MaxBindParams:     32766,
		MaxStatementBytes: 0,
		MaxInList:         0,
		ClockResolution:   time.Millisecond,
	}
}

// Rebind returns query unchanged: SQLite takes '?'.
func (d *sqliteDialect) Rebind(query string) string { return sqlkit.RebindQuestion(query) }

// Param returns "?": SQLite is dynamically typed and never needs a cast.
func (d *sqliteDialect) Param(dialect.ColumnType) string { return "?" }

// Now returns the database clock in microseconds. julianday('now') is the
// clock SQLite keeps internally (whole milliseconds) as a float of days;
// it is shifted to the Unix epoch and rounded, not truncated, because the
// float times 86400000 often lands just below the whole millisecond.
// julianday works on every SQLite this dialect supports, where
// unixepoch() needs 3.38 and unixepoch('subsec') 3.42.
func (d *sqliteDialect) Now(offset time.Duration) string {
	const now = nowExpr
	us := offset.Microseconds()
	switch {
	case us > 0:
		return "(" + now + " + " + strconv.FormatInt(us, 10) + ")"
	case us < 0:
		return "(" + now + " - " + strconv.FormatInt(-us, 10) + ")"
	}
	return "(" + now + ")"
}

// Limit returns " LIMIT n". A negative n becomes 0: SQLite reads a
// negative LIMIT as no limit at all.
func (d *sqliteDialect) Limit(n int) string {
	if n < 0 {
		n = 0
	}
	return " LIMIT " + strconv.Itoa(n)
}

// AddMicros adds a bound number of microseconds to t.
func (d *sqliteDialect) AddMicros(t string) string { return "(" + t + " + ?)" }

// Claim takes up to spec.Limit rows in one UPDATE ... WHERE key IN (SELECT
// ... LIMIT n) RETURNING. The caller's transaction is immediate, so nothing
// can change the rows between the subquery and the update.
func (d *sqliteDialect) Claim(ctx context.Context, q dialect.Querier, spec dialect.ClaimSpec) (*sql.Rows, error) {
	if q == nil {
		return nil, errors.New("sqlite: claim: nil querier")
	}
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("sqlite: claim: %w", err)
	}
	stmt := "UPDATE " + spec.Table + " SET " + spec.Set +
		" WHERE " + spec.Key + " IN (" + spec.Candidates(d.Limit(spec.Limit)) + ")" +
		" RETURNING " + strings.Join(spec.Returning, ", ")
	args := make([]any, 0, len(spec.SetArgs)+len(spec.FilterArgs))
	args = append(args, spec.SetArgs...)
	args = append(args, spec.FilterArgs...)
	return q.QueryContext(ctx, stmt, args...)
}

// InsertIgnore returns INSERT ... VALUES (row), ... ON CONFLICT DO NOTHING.
// Without a conflict target SQLite skips a row that violates any unique
// index, and counts only the rows it inserted as affected. n below 1 gives a
// statement that SQLite rejects.
func (d *sqliteDialect) InsertIgnore(table string, columns []string, row string, n int, _ []string) string {
	return sqlkit.InsertValues(table, columns, row, n) + " ON CONFLICT DO NOTHING"
}

// UUID binds the 16 raw bytes.
func (d *sqliteDialect) UUID(u uuid.UUID) any {
	b := make([]byte, 16)
	copy(b, u[:])
	return b
}

// JSON binds the document as TEXT, and a nil slice as NULL.
func (d *sqliteDialect) JSON(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// Bool binds 0 or 1.
func (d *sqliteDialect) Bool(b bool) any {
	if b {
		return int64(1)
	}
	return int64(0)
}

// ScanTime reads integer microseconds since the Unix epoch. It also takes
// the other forms a value may arrive in (a float, a number as text, a
// time.Time) so that an expression the driver did not type as INTEGER still
// reads back.
func (d *sqliteDialect) ScanTime(src any) (time.Time, error) {
	switch v := src.(type) {
	case int64:
		return time.UnixMicro(v).UTC(), nil
	case int:
		return time.UnixMicro(int64(v)).UTC(), nil
	case int32:
		return time.UnixMicro(int64(v)).UTC(), nil
	case float64:
		return microsFromFloat(v)
	case []byte:
		return parseMicros(string(v))
	case string:
		return parseMicros(v)
	case time.Time:
		return v.UTC(), nil
	case nil:
		return time.Time{}, errors.New("sqlite: scan time: NULL")
	}
	return time.Time{}, fmt.Errorf("sqlite: scan time: unsupported type %T", src)
}

func microsFromFloat(f float64) (time.Time, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) || f > math.MaxInt64 || f < math.MinInt64 {
		return time.Time{}, fmt.Errorf("sqlite: scan time: %v is not a time in microseconds", f)
	}
	return time.UnixMicro(int64(math.Round(f))).UTC(), nil
}

func parseMicros(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.UnixMicro(n).UTC(), nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return microsFromFloat(f)
	}
	return time.Time{}, fmt.Errorf("sqlite: scan time: %q is not a time in microseconds", s)
}

// Classify maps SQLite's result codes: BUSY and LOCKED (with their extended
// codes) are retryable, unique and primary-key violations are
// UniqueViolation, and a timeout of the writer queue is retryable.
func (d *sqliteDialect) Classify(err error) dialect.ErrorClass {
	if err == nil {
		return dialect.Other
	}
	if errors.Is(err, ErrWriterQueueTimeout) {
		return dialect.Retryable
	}
	var se *msqlite.Error
	if errors.As(err, &se) {
		code := se.Code()
		switch code & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
			return dialect.Retryable
		}
		switch code {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return dialect.UniqueViolation
		}
		return dialect.Other
	}
	if sqlkit.IsConnectionLost(err) {
		return dialect.ConnectionLost
	}
	return dialect.Other
}

// Lock returns a no-op: SQLite has one writer, and a migrator's own
// immediate transaction already excludes every other migrator.
func (d *sqliteDialect) Lock(context.Context, *sql.Conn, string) (func(context.Context) error, error) {
	return func(context.Context) error { return nil }, nil
}
