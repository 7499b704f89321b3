package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
)

// Check verifies, on one connection, the settings the dialect depends on:
// SQLite MinVersion or later, a database file (not an in-memory or temporary database, which every pooled
// connection would get a private copy of), a busy_timeout of at least a
// second, and WAL journaling. Each refusal names the DSN setting to add;
// Open's DSN has them all.
func (d *sqliteDialect) Check(ctx context.Context, db *sql.DB) error {
	if db == nil {
		return errors.New("sqlite: check: nil *sql.DB")
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("sqlite: check: cannot get a connection (is the *sql.DB closed?): %w", err)
	}
	defer conn.Close()

	var version string
	if err := conn.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&version); err != nil {
		return fmt.Errorf("sqlite: check: sqlite_version(): is the *sql.DB (driver %T) a SQLite database? %w", db.Driver(), err)
	}
	if !atLeast(version, MinVersion) {
		return fmt.Errorf("sqlite: check: SQLite %s is older than %s, the oldest this dialect supports (claims need RETURNING, down migrations ALTER TABLE DROP COLUMN); use a newer SQLite library or driver", version, MinVersion)
	}

	file, err := mainFile(ctx, conn)
	if err != nil {
		return err
	}
	if file == "" {
		return errors.New("sqlite: check: the database is in-memory or temporary, so each pooled connection would get its own private database; open a file path (sqlite.Open(path))")
	}

	var busy int64
	if err := conn.QueryRowContext(ctx, "PRAGMA busy_timeout").Scan(&busy); err != nil {
		return fmt.Errorf("sqlite: check: PRAGMA busy_timeout: %w", err)
	}
	if busy < minBusyTimeout {
		return fmt.Errorf("sqlite: check: busy_timeout is %d ms, below %d ms: writers would fail with SQLITE_BUSY at once; add _pragma=busy_timeout(%d) to the DSN (or open with sqlite.Open)",
			busy, minBusyTimeout, BusyTimeout.Milliseconds())
	}

	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("sqlite: check: PRAGMA journal_mode: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		return fmt.Errorf("sqlite: check: journal_mode is %q, not wal: readers would block the writer; add _pragma=journal_mode(WAL) to the DSN (or open with sqlite.Open)", mode)
	}
	return nil
}

// mainFile returns the file name of the main database, "" for an in-memory
// or temporary one.
func mainFile(ctx context.Context, conn *sql.Conn) (string, error) {
	rows, err := conn.QueryContext(ctx, "PRAGMA database_list")
	if err != nil {
		return "", fmt.Errorf("sqlite: check: PRAGMA database_list: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var seq int64
		var name string
		var file sql.NullString
		if err := rows.Scan(&seq, &name, &file); err != nil {
			return "", fmt.Errorf("sqlite: check: PRAGMA database_list: %w", err)
		}
		if name == "main" {
			return file.String, rows.Close()
		}
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("sqlite: check: PRAGMA database_list: %w", err)
	}
	return "", errors.New("sqlite: check: PRAGMA database_list has no main database")
}

// TableExists reports whether table exists in the main database. The
// migrator uses it, when a dialect offers it, to tell a missing migrations
// table from a failing query.
func (d *sqliteDialect) TableExists(ctx context.Context, q dialect.Querier, table string) (bool, error) {
	return sqlkit.Exists(ctx, q, "sqlite: table exists", "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = ?", table)
}

// atLeast reports whether the dotted version v is min or later. Parts that
// are not numbers count as 0, so a malformed version reads as old.
func atLeast(v, min string) bool {
	vs, ms := strings.Split(v, "."), strings.Split(min, ".")
	for i := range ms {
		var a, b int
		if i < len(vs) {
			a, _ = strconv.Atoi(vs[i])
		}
		b, _ = strconv.Atoi(ms[i])
		if a != b {
			return a > b
		}
	}
	return true
}
