package core_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/testkit/storeworkload"
	"github.com/plenumdb/plenum/sqlite"
)

// bindCounter is a database/sql driver over SQLite's that counts, for
// every statement it runs, the '?' outside quotes against the arguments
// given, and records every statement whose counts differ.
type bindCounter struct {
	driver.Driver
	mu     sync.Mutex
	wrong  []string
	issued int
}

func (b *bindCounter) check(query string, n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.issued++
	if got := core.CountBinds(query); got != n {
		b.wrong = append(b.wrong, fmt.Sprintf("%d '?' for %d arguments: %s", got, n, query))
	}
}

func (b *bindCounter) Open(name string) (driver.Conn, error) {
	c, err := b.Driver.Open(name)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, b: b}, nil
}

type countingConn struct {
	driver.Conn
	b *bindCounter
}

func (c *countingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	c.b.check(query, len(args))
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
}

func (c *countingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	c.b.check(query, len(args))
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
}

func (c *countingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c *countingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return nil, errors.New("bind counter: statements are not prepared")
}

func (c *countingConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

var registerCounter = sync.OnceValue(func() *bindCounter {
	db, _ := sql.Open(sqlite.DriverName, "")
	b := &bindCounter{Driver: db.Driver()}
	db.Close()
	sql.Register("plenum-bind-counter", b)
	return b
})

// TestStatements_BindsMatchArguments runs every operation of the store,
// on both completion paths, through a driver that counts each statement's
// '?' against its arguments. With the placeholders showing their binds
// (TestExpansions_ShowEveryBind), a statement as written in the core has
// exactly as many '?' as it is given arguments.
func TestStatements_BindsMatchArguments(t *testing.T) {
	b := registerCounter()
	for _, d := range []dialect.Dialect{sqlite.Dialect(), storeworkload.NoReturning{Dialect: sqlite.Dialect()}} {
		t.Run(fmt.Sprintf("ReturningUpdate=%v", d.Capabilities().ReturningUpdate), func(t *testing.T) {
			dsn, err := sqlite.DSN(filepath.Join(t.TempDir(), "binds.db"))
			if err != nil {
				t.Fatal(err)
			}
			db, err := sql.Open("plenum-bind-counter", dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			storeworkload.Run(t, db, d)
		})
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.issued < 100 {
		t.Fatalf("only %d statements went through the counter", b.issued)
	}
	for _, w := range b.wrong {
		t.Error(w)
	}
	t.Logf("%d statements counted", b.issued)
}
