package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
)

// ErrWriterQueueTimeout is returned by Begin when a write transaction waited
// WriterQueueTimeout for the other writers of its *sql.DB without getting its
// turn. Classify reports it as retryable.
var ErrWriterQueueTimeout = errors.New("sqlite: timed out waiting for the other write transactions of this *sql.DB")

// Begin starts a transaction on a connection of its own. A write
// transaction first waits for its turn among the writers of db in this
// process (an urgent one before the others waiting), then runs BEGIN IMMEDIATE, so that it holds SQLite's write lock
// from the start and never meets SQLITE_BUSY half way. A read-only one runs
// a deferred BEGIN and does not queue.
//
// On a database that Open opened, whose DSN makes db.BeginTx run BEGIN
// IMMEDIATE, the transaction is database/sql's own, and runs the
// statements it is given arguments for prepared once per connection
// (stmtCache); on any other it runs its own BEGIN on a connection taken
// from db (sqlkit.BeginConn).
func (d *sqliteDialect) Begin(ctx context.Context, db *sql.DB, opts dialect.TxOptions) (dialect.Tx, error) {
	if db == nil {
		return nil, errors.New("sqlite: begin: nil *sql.DB")
	}
	begin, release := "BEGIN", func() {}
	if !opts.ReadOnly {
		q := writerQueue(db)
		if err := q.acquire(ctx, opts.Urgent, d.writerWait); err != nil {
			return nil, fmt.Errorf("sqlite: begin: %w", err)
		}
		var once sync.Once
		begin, release = "BEGIN IMMEDIATE", func() { once.Do(q.release) }
	}
	if drv, ok := db.Driver().(*openedDriver); ok {
		return beginStmtTx(ctx, db, drv.stmts, opts, release)
	}
	tx, err := sqlkit.BeginConn(ctx, db, begin, release)
	if err != nil {
		// Not tx itself: a nil *sqlkit.ConnTx in a Tx interface is not nil.
		return nil, fmt.Errorf("sqlite: begin: %w", err)
	}
	return tx, nil
}

// beginStmtTx begins a transaction of database/sql on db, which Open
// opened: its DSN's _txlock=immediate makes a write transaction's BEGIN an
// immediate one, and a read-only one (sql.TxOptions.ReadOnly) runs a
// deferred BEGIN. The statements noted since the last transaction are
// prepared first, while this one holds no connection yet.
//
// ctx bounds the begin only, as on an sqlkit.ConnTx: database/sql would
// roll the transaction back once the context given to BeginTx ends, so it
// gets one that ends only with the transaction, or with ctx while BEGIN
// runs.
func beginStmtTx(ctx context.Context, db *sql.DB, stmts *stmtCache, opts dialect.TxOptions, release func()) (dialect.Tx, error) {
	if err := ctx.Err(); err != nil {
		release()
		return nil, fmt.Errorf("sqlite: begin: %w", err)
	}
	stmts.prepare(ctx)
	life, end := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, end)
	tx, err := db.BeginTx(life, &sql.TxOptions{ReadOnly: opts.ReadOnly})
	if !stop() && err == nil {
		// ctx ended while BEGIN ran: the transaction is being rolled back.
		_ = tx.Rollback()
		err = ctx.Err()
	}
	if err != nil {
		end()
		release()
		return nil, fmt.Errorf("sqlite: begin: %w", err)
	}
	return &stmtTx{tx: tx, stmts: stmts, release: func() { end(); release() }}, nil
}
