// Package wiretap opens SQLite databases through a driver that shows a
// test every statement sent on them, with how many arguments it was
// given: the statement catalog's coverage test and core's bind counter
// read the wire through it.
package wiretap

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"sync"
	"testing"

	"github.com/plenumdb/plenum/sqlite"
)

// Statement is one statement as sent: its text and its argument count.
type Statement struct {
	Query string
	Args  int
}

// Tap records what its databases send.
type Tap struct {
	// FailQuery, when set, is asked before each query (not each exec):
	// a non-nil error fails the query with it, unsent and unrecorded.
	FailQuery func() error

	mu   sync.Mutex
	sent []Statement
}

// Take returns what was sent since the last Take, in order, and forgets it.
func (t *Tap) Take() []Statement {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.sent
	t.sent = nil
	return out
}

func (t *Tap) note(query string, args int) {
	t.mu.Lock()
	t.sent = append(t.sent, Statement{query, args})
	t.mu.Unlock()
}

// Open opens the SQLite file at path, with the dialect's settings, through
// a driver whose statements tap records; the database is closed when the
// test ends.
func Open(tb testing.TB, tap *Tap, path string) *sql.DB {
	tb.Helper()
	dsn, err := sqlite.DSN(path)
	if err != nil {
		tb.Fatal(err)
	}
	probe, err := sql.Open(sqlite.DriverName, "")
	if err != nil {
		tb.Fatal(err)
	}
	drv := probe.Driver()
	probe.Close()
	db := sql.OpenDB(connector{drv: drv, dsn: dsn, tap: tap})
	tb.Cleanup(func() { db.Close() })
	return db
}

type connector struct {
	drv driver.Driver
	dsn string
	tap *Tap
}

func (c connector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return &tappedConn{Conn: conn, tap: c.tap}, nil
}

func (c connector) Driver() driver.Driver { return c.drv }

// tappedConn passes every call to SQLite's connection, noting each
// statement first. It prepares nothing, so that every statement goes
// through ExecContext or QueryContext and is seen.
type tappedConn struct {
	driver.Conn
	tap *Tap
}

func (c *tappedConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	c.tap.note(query, len(args))
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
}

func (c *tappedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if c.tap.FailQuery != nil {
		if err := c.tap.FailQuery(); err != nil {
			return nil, err
		}
	}
	c.tap.note(query, len(args))
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
}

func (c *tappedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c *tappedConn) PrepareContext(context.Context, string) (driver.Stmt, error) {
	return nil, errors.New("wiretap: statements are not prepared")
}

func (c *tappedConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}
