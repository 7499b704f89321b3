package dialect

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RebindQuestion returns query unchanged: the '?' style of SQLite and MySQL.
func RebindQuestion(query string) string { return query }

// RebindNumbered rewrites '?' placeholders as prefix followed by their
// 1-based position: "$1, $2" for PostgreSQL (prefix "$"), ":1, :2" for Oracle
// (prefix ":"). Placeholders inside single-quoted literals, double-quoted
// identifiers and comments are left alone.
func RebindNumbered(query, prefix string) string {
	if strings.IndexByte(query, '?') < 0 {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch c {
		case '\'', '"':
			j := i + 1
			for j < len(query) {
				if query[j] == c {
					if j+1 < len(query) && query[j+1] == c { // doubled quote
						j += 2
						continue
					}
					break
				}
				j++
			}
			if j >= len(query) {
				j = len(query) - 1
			}
			b.WriteString(query[i : j+1])
			i = j
		case '-':
			if i+1 < len(query) && query[i+1] == '-' {
				j := strings.IndexByte(query[i:], '\n')
				if j < 0 {
					j = len(query) - i - 1
				}
				b.WriteString(query[i : i+j+1])
				i += j
				continue
			}
			b.WriteByte(c)
		case '?':
			n++
			b.WriteString(prefix)
			b.WriteString(strconv.Itoa(n))
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Placeholders returns "?, ?, ..." with n placeholders, for IN lists.
func Placeholders(n int) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat("?, ", n-1) + "?"
}

// ConnTx is a transaction that its dialect began with its own statement on a
// dedicated connection (SQLite's "BEGIN IMMEDIATE", which database/sql cannot
// ask for). It commits and rolls back with plain COMMIT and ROLLBACK, and
// makes sure the connection never goes back to the pool with a transaction
// still open: if the rollback itself fails, the connection is discarded.
type ConnTx struct {
	conn *sql.Conn
	done bool
	// release, when set, runs once when the transaction ends.
	release func()
}

// BeginConn takes a connection from db and runs begin on it (for example
// "BEGIN IMMEDIATE"). release, if not nil, runs once when the transaction
// ends, however it ends.
func BeginConn(ctx context.Context, db *sql.DB, begin string, release func()) (*ConnTx, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		if release != nil {
			release()
		}
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, begin); err != nil {
		// A BEGIN that failed left no transaction open, unless the context
		// ended half way: then play safe and discard the connection.
		if ctx.Err() != nil {
			discard(conn)
		}
		conn.Close()
		if release != nil {
			release()
		}
		return nil, err
	}
	return &ConnTx{conn: conn, release: release}, nil
}

// ExecContext runs a statement inside the transaction.
func (t *ConnTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if t.done {
		return nil, sql.ErrTxDone
	}
	return t.conn.ExecContext(ctx, query, args...)
}

// QueryContext runs a query inside the transaction.
func (t *ConnTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if t.done {
		return nil, sql.ErrTxDone
	}
	return t.conn.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a query for one row inside the transaction.
func (t *ConnTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return t.conn.QueryRowContext(ctx, query, args...)
}

// Commit commits the transaction. If COMMIT fails, the transaction is rolled
// back before the error is returned, so that it never stays open.
func (t *ConnTx) Commit() error {
	if t.done {
		return sql.ErrTxDone
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := t.conn.ExecContext(ctx, "COMMIT")
	if err != nil {
		t.rollback()
		return err
	}
	t.finish(false)
	return nil
}

// Rollback rolls the transaction back.
func (t *ConnTx) Rollback() error {
	if t.done {
		return sql.ErrTxDone
	}
	return t.rollback()
}

func (t *ConnTx) rollback() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := t.conn.ExecContext(ctx, "ROLLBACK")
	t.finish(err != nil)
	return err
}

func (t *ConnTx) finish(bad bool) {
	t.done = true
	if bad {
		discard(t.conn)
	}
	t.conn.Close()
	if t.release != nil {
		t.release()
		t.release = nil
	}
}

// discard marks conn broken so that database/sql closes it instead of
// returning it to the pool.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
}

// IsNoRows reports whether err is sql.ErrNoRows.
func IsNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// Exists runs query, a SELECT COUNT(*) of a catalog (the probes a
// migrator asks where DDL is not transactional: TableExists, IndexExists,
// ColumnExists), and reports whether it counted a row. what names the
// probe in an error ("mysql: table exists").
func Exists(ctx context.Context, q Querier, what, query string, args ...any) (bool, error) {
	var n int64
	if err := q.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	return n > 0, nil
}
