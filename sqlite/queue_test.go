package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/plenumdb/plenum/dialect"
)

// The writer queue's bound, shortened: the wait ends with an error that
// Classify calls retryable, and the queue still works afterwards.
func TestWriterQueueTimeout(t *testing.T) {
	t.Parallel()
	db, err := Open(filepath.Join(t.TempDir(), "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d := &sqliteDialect{writerWait: 50 * time.Millisecond}
	ctx := context.Background()

	held, err := d.Begin(ctx, db, dialect.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = d.Begin(ctx, db, dialect.TxOptions{})
	if !errors.Is(err, ErrWriterQueueTimeout) || d.Classify(err) != dialect.Retryable {
		t.Fatalf("Begin behind a held writer = %v (class %v)", err, d.Classify(err))
	}
	if waited := time.Since(start); waited < 50*time.Millisecond || waited > 5*time.Second {
		t.Fatalf("waited %v for a 50ms bound", waited)
	}
	if err := held.Commit(); err != nil {
		t.Fatal(err)
	}
	tx, err := d.Begin(ctx, db, dialect.TxOptions{})
	if err != nil {
		t.Fatalf("Begin after the holder committed: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
}

// Every *sql.DB has its own queue, and the same one every time.
func TestWriterQueuePerDB(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, err := Open(filepath.Join(dir, "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(filepath.Join(dir, "b.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	first := writerQueue(a)
	if writerQueue(a) != first || first == writerQueue(b) {
		t.Fatal("writer queues are not one per *sql.DB")
	}
}
