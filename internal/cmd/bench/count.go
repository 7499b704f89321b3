package bench

import (
	"context"
	"database/sql"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/plenumdb/plenum/dialect"
)

// stmtCounter counts the statements and transactions one side of the bench
// ran, and keeps the distinct texts of its statements for --sql.
type stmtCounter struct {
	stmts, txs atomic.Int64

	mu    sync.Mutex
	texts map[string]int // statement text -> times run, while recording
}

// counts is a snapshot of a counter.
type counts struct{ stmts, txs int64 }

func (c *stmtCounter) snapshot() counts { return counts{c.stmts.Load(), c.txs.Load()} }

func (c counts) since(before counts) counts {
	return counts{c.stmts - before.stmts, c.txs - before.txs}
}

// ran counts one statement of text.
func (c *stmtCounter) ran(text string) {
	c.stmts.Add(1)
	c.mu.Lock()
	if c.texts != nil {
		c.texts[text]++
	}
	c.mu.Unlock()
}

// record starts keeping the texts run from now on, forgetting earlier ones.
func (c *stmtCounter) record() {
	c.mu.Lock()
	c.texts = map[string]int{}
	c.mu.Unlock()
}

// recorded returns the texts kept since record, most run first, and stops
// keeping them.
func (c *stmtCounter) recorded() []string {
	c.mu.Lock()
	texts := c.texts
	c.texts = nil
	c.mu.Unlock()
	out := make([]string, 0, len(texts))
	for t := range texts {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool {
		if texts[out[i]] != texts[out[j]] {
			return texts[out[i]] > texts[out[j]]
		}
		return out[i] < out[j]
	})
	return out
}

// countingDialect is a dialect whose transactions count their statements:
// Plenum's store is opened on it, so that the bench can say how many
// statements and transactions Plenum spends per item without a driver of
// its own. Every statement of the hot path runs inside a transaction begun
// by the dialect (statements a store runs on the *sql.DB outside any
// transaction are not counted; the hot path has none). It hides the
// dialect's notifier (dialect.Notifier): the measured stores claim in a
// loop and need no wake-ups. The optional interfaces that shape the
// statements a user's store sends (dialect.UUIDLister,
// dialect.KeyLister, dialect.Purger, dialect.RowLocker) it passes on
// (dialect.Wrapper): hiding them measured statements no user runs (on PostgreSQL, completions with an IN
// list of 100 placeholders instead of one uuid[], retention by a read and
// a transaction of deletes instead of one statement a batch, and lanes
// written twice by a claim of keyed items).
type countingDialect struct {
	dialect.Dialect
	c *stmtCounter
}

// countingDialectOf returns d counted by c. It passes on the optional
// interfaces of d that shape statements (dialect.Wrapper), so that
// Plenum's side sends the statements a user's store sends.
func countingDialectOf(d dialect.Dialect, c *stmtCounter) dialect.Dialect {
	return countingDialect{Dialect: d, c: c}
}

// Unwrap returns the dialect counted.
func (d countingDialect) Unwrap() dialect.Dialect { return d.Dialect }

func (d countingDialect) Begin(ctx context.Context, db *sql.DB, opts dialect.TxOptions) (dialect.Tx, error) {
	tx, err := d.Dialect.Begin(ctx, db, opts)
	if err != nil {
		return nil, err
	}
	d.c.txs.Add(1)
	return countingTx{Tx: tx, c: d.c}, nil
}

// countingTx counts the statements run in one transaction.
type countingTx struct {
	dialect.Tx
	c *stmtCounter
}

func (t countingTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return countingQuerier{t.Tx, t.c}.ExecContext(ctx, q, args...)
}

func (t countingTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return countingQuerier{t.Tx, t.c}.QueryContext(ctx, q, args...)
}

func (t countingTx) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return countingQuerier{t.Tx, t.c}.QueryRowContext(ctx, q, args...)
}

// countingQuerier counts the statements it runs.
type countingQuerier struct {
	q dialect.Querier
	c *stmtCounter
}

func (q countingQuerier) ExecContext(ctx context.Context, text string, args ...any) (sql.Result, error) {
	q.c.ran(text)
	return q.q.ExecContext(ctx, text, args...)
}

func (q countingQuerier) QueryContext(ctx context.Context, text string, args ...any) (*sql.Rows, error) {
	q.c.ran(text)
	return q.q.QueryContext(ctx, text, args...)
}

func (q countingQuerier) QueryRowContext(ctx context.Context, text string, args ...any) *sql.Row {
	q.c.ran(text)
	return q.q.QueryRowContext(ctx, text, args...)
}
