package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"sync"

	"github.com/plenumdb/plenum/dialect"
)

// maxCachedStmts bounds the statements one *sql.DB keeps prepared: the
// store's statements with their batch sizes fit many times over.
const maxCachedStmts = 256

// openedDriver is the driver of a *sql.DB that Open opened: modernc's,
// with the statements its transactions reuse. Begin recognises it by type:
// such a database's DSN begins every write transaction of db.BeginTx with
// BEGIN IMMEDIATE (_txlock=immediate), so that Begin can use database/sql's
// own transactions, whose statements database/sql prepares once per
// connection.
type openedDriver struct {
	driver.Driver
	stmts *stmtCache
}

// openedConnector makes the *sql.DB's Driver() the openedDriver.
type openedConnector struct {
	driver.Connector
	drv *openedDriver
}

// Driver returns the openedDriver.
func (c *openedConnector) Driver() driver.Driver { return c.drv }

// stmtCache holds the statements that write transactions on one *sql.DB
// ran with arguments, each prepared once on the *sql.DB; a transaction
// runs a cached one through tx.StmtContext, which database/sql prepares
// on the transaction's connection the first time and reuses after.
//
// modernc.org/sqlite otherwise prepares, which means parses and plans,
// every statement it runs. A statement is prepared only between
// transactions (prepare, from Begin), never while a transaction holds a
// connection: on a pool of one connection (SetMaxOpenConns(1)) that would
// wait for itself.
type stmtCache struct {
	db *sql.DB

	mu      sync.Mutex
	stmts   map[string]*sql.Stmt // nil: could not be prepared, run as it is
	pending map[string]bool      // run, to prepare before the next transaction
}

func newStmtCache() *stmtCache {
	return &stmtCache{stmts: map[string]*sql.Stmt{}, pending: map[string]bool{}}
}

// lookup returns the prepared statement for query, or nil; a query seen
// for the first time is noted, to be prepared by the next prepare.
func (c *stmtCache) lookup(query string, args int) *sql.Stmt {
	if args == 0 {
		// DDL, and the statements without arguments, are not the hot path.
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.stmts[query]
	if !ok && len(c.stmts)+len(c.pending) < maxCachedStmts {
		c.pending[query] = true
	}
	return s
}

// prepare prepares the statements noted since the last call. A statement
// that does not prepare on its own (one naming a TEMP table, say) is
// remembered as such and always run unprepared.
func (c *stmtCache) prepare(ctx context.Context) {
	c.mu.Lock()
	if len(c.pending) == 0 || c.db == nil {
		c.mu.Unlock()
		return
	}
	queries := make([]string, 0, len(c.pending))
	for q := range c.pending {
		queries = append(queries, q)
	}
	clear(c.pending)
	c.mu.Unlock()
	for _, q := range queries {
		s, err := c.db.PrepareContext(ctx, q)
		if err != nil {
			if ctx.Err() != nil {
				return // not the statement's fault: try again next time
			}
			s = nil
		}
		c.mu.Lock()
		if _, ok := c.stmts[q]; ok {
			if s != nil {
				s.Close()
			}
		} else {
			c.stmts[q] = s
		}
		c.mu.Unlock()
	}
}

// stmtTx is a transaction of database/sql that runs the statements of its
// database's stmtCache prepared.
type stmtTx struct {
	tx      *sql.Tx
	stmts   *stmtCache
	release func()
}

var _ dialect.Tx = (*stmtTx)(nil)

// ExecContext runs a statement inside the transaction.
func (t *stmtTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := t.stmts.lookup(query, len(args)); s != nil {
		return t.tx.StmtContext(ctx, s).ExecContext(ctx, args...)
	}
	return t.tx.ExecContext(ctx, query, args...)
}

// QueryContext runs a query inside the transaction.
func (t *stmtTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := t.stmts.lookup(query, len(args)); s != nil {
		return t.tx.StmtContext(ctx, s).QueryContext(ctx, args...)
	}
	return t.tx.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a query for one row inside the transaction.
func (t *stmtTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := t.stmts.lookup(query, len(args)); s != nil {
		return t.tx.StmtContext(ctx, s).QueryRowContext(ctx, args...)
	}
	return t.tx.QueryRowContext(ctx, query, args...)
}

// Commit commits the transaction; a COMMIT that fails leaves it rolled
// back (modernc.org/sqlite rolls back after a failed COMMIT).
func (t *stmtTx) Commit() error {
	defer t.release()
	return t.tx.Commit()
}

// Rollback rolls the transaction back.
func (t *stmtTx) Rollback() error {
	defer t.release()
	return t.tx.Rollback()
}
