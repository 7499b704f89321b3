package sqlkit

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"time"
)

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
