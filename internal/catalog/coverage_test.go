package catalog_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/catalog"
	"github.com/plenumdb/plenum/internal/testkit/storeworkload"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/sqlite"
)

// wire is a database/sql driver over SQLite's that records every statement
// it runs.
type wire struct {
	driver.Driver
	mu   sync.Mutex
	sent []string
}

func (w *wire) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.sent
	w.sent = nil
	return out
}

func (w *wire) Open(name string) (driver.Conn, error) {
	c, err := w.Driver.Open(name)
	if err != nil {
		return nil, err
	}
	return &wireConn{Conn: c, w: w}, nil
}

type wireConn struct {
	driver.Conn
	w *wire
}

func (c *wireConn) note(q string) {
	c.w.mu.Lock()
	c.w.sent = append(c.w.sent, q)
	c.w.mu.Unlock()
}

func (c *wireConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	c.note(query)
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
}

func (c *wireConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	c.note(query)
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
}

func (c *wireConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c *wireConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return nil, errors.New("wire: statements are not prepared")
}

func (c *wireConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

var registerWire = sync.OnceValue(func() *wire {
	db, _ := sql.Open(sqlite.DriverName, "")
	w := &wire{Driver: db.Driver()}
	db.Close()
	sql.Register("plenum-catalog-wire", w)
	return w
})

func openWire(t *testing.T, name string) *sql.DB {
	t.Helper()
	dsn, err := sqlite.DSN(filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("plenum-catalog-wire", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// ownStatements are what the dialect and the migrations package send on
// their own, without the core: migrating, reading the schema version,
// checking the connection, beginning and ending transactions.
func ownStatements(t *testing.T, w *wire, d dialect.Dialect) map[string]bool {
	t.Helper()
	ctx := context.Background()
	db := openWire(t, "own.db")
	w.take()
	if _, err := migrations.Apply(ctx, db, d, core.DefaultPrefix); err != nil {
		t.Fatal(err)
	}
	if _, err := migrations.Version(ctx, db, d, core.DefaultPrefix); err != nil {
		t.Fatal(err)
	}
	if err := d.Check(ctx, db); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []dialect.TxOptions{{}, {ReadOnly: true}} {
		for _, commit := range []bool{true, false} {
			tx, err := d.Begin(ctx, db, opts)
			if err != nil {
				t.Fatal(err)
			}
			end := tx.Rollback
			if commit {
				end = tx.Commit
			}
			if err := end(); err != nil {
				t.Fatal(err)
			}
		}
	}
	own := map[string]bool{}
	for _, q := range w.take() {
		own[q] = true
	}
	return own
}

// TestCatalog_CoversEveryStatement runs every operation of the store, on
// both completion paths, through a driver that records each statement
// sent, and fails on one that is neither the dialect's or the migrations'
// own (what they send run on their own) nor the rendering of a catalog
// entry at some size, for the options of the store that sent it.
func TestCatalog_CoversEveryStatement(t *testing.T) {
	w := registerWire()
	reached := map[string]bool{}
	var names []string
	for _, d := range []dialect.Dialect{sqlite.Dialect(), storeworkload.NoReturning{Dialect: sqlite.Dialect()}} {
		t.Run(fmt.Sprintf("ReturningUpdate=%v", d.Capabilities().ReturningUpdate), func(t *testing.T) {
			own := ownStatements(t, w, d)
			var cats []*catalog.Catalog
			for _, off := range []time.Duration{0, 2 * time.Hour, 4 * time.Hour} { // the workload's stores
				c, err := catalog.New(d, core.Options{ClockOffset: off})
				if err != nil {
					t.Fatal(err)
				}
				cats = append(cats, c)
			}
			db := openWire(t, "catalog.db")
			w.take()
			storeworkload.Run(t, db, d)
			sent := w.take()
			if len(sent) < 100 {
				t.Fatalf("only %d statements recorded", len(sent))
			}
			used := map[string]int{}
			missing := map[string]bool{}
			owned := 0
		next:
			for _, q := range sent {
				if own[q] {
					owned++
					continue
				}
				for _, c := range cats {
					if st, ok := c.Match(q); ok {
						used[st.Name]++
						continue next
					}
				}
				missing[q] = true
			}
			for q := range missing {
				t.Errorf("sent, and in no catalog entry: %s", q)
			}
			all, err := cats[0].Statements(1)
			if err != nil {
				t.Fatal(err)
			}
			var unused []string
			for _, st := range all {
				if !slices.Contains(names, st.Name) {
					names = append(names, st.Name)
				}
				if used[st.Name] > 0 {
					reached[st.Name] = true
				}
				if used[st.Name] == 0 && !slices.Contains(unused, st.Name) {
					unused = append(unused, st.Name)
				}
			}
			t.Logf("%d statements sent: %d the dialect's or migrations' own, %d of %d catalog templates; not reached by this workload: %s",
				len(sent), owned, len(used), len(used)+len(unused), strings.Join(unused, ", "))
		})
	}
	// Every entry is reached on one path or the other: an entry no
	// statement matches is a template the core no longer sends, or sends
	// in another shape.
	for _, n := range names {
		if !reached[n] {
			t.Errorf("catalog entry %q: no statement sent matched it", n)
		}
	}
}
