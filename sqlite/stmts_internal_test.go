package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/plenumdb/plenum/dialect"
)

// Write transactions on a database Open opened run a statement with
// arguments prepared from its second transaction on, on a pool of a single
// connection too: the statement is prepared between transactions, never
// while one holds the pool's only connection.
func TestStmtCache_PreparesBetweenTransactionsOnAPoolOfOne(t *testing.T) {
	t.Parallel()
	db, err := Open(filepath.Join(t.TempDir(), "stmts.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	drv, ok := db.Driver().(*openedDriver)
	if !ok {
		t.Fatalf("Open's *sql.DB has the driver %T, not the one Begin reuses statements for", db.Driver())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (n INTEGER)"); err != nil {
		t.Fatal(err)
	}
	const insert = "INSERT INTO t (n) VALUES (?)"
	const count = "SELECT COUNT(*) FROM t WHERE n >= ?"
	for i := range 5 {
		tx, err := Dialect().Begin(ctx, db, dialect.TxOptions{})
		if err != nil {
			t.Fatalf("transaction %d: %v", i, err)
		}
		if _, ok := tx.(*stmtTx); !ok {
			t.Fatalf("Begin returned a %T, not a transaction that reuses statements", tx)
		}
		if _, err := tx.ExecContext(ctx, insert, i); err != nil {
			t.Fatalf("transaction %d: %v", i, err)
		}
		var n int
		if err := tx.QueryRowContext(ctx, count, 0).Scan(&n); err != nil || n != i+1 {
			t.Fatalf("transaction %d counted %d, %v; want %d", i, n, err, i+1)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	drv.stmts.mu.Lock()
	defer drv.stmts.mu.Unlock()
	for _, q := range []string{insert, count} {
		if drv.stmts.stmts[q] == nil {
			t.Errorf("%q was not prepared for reuse", q)
		}
	}
}
