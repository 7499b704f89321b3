package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
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

// waiting counts the writers waiting for their turn.
func (q *writers) waiting() (urgent, ordered int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.urgent), len(q.ordered)
}

// awaitWaiting waits, for a minute at most, until q holds urgent and
// ordered waiters.
func awaitWaiting(t *testing.T, q *writers, urgent, ordered int) {
	t.Helper()
	for end := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		u, o := q.waiting()
		if u == urgent && o == ordered {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("writers waiting: %d urgent, %d ordinary; want %d, %d", u, o, urgent, ordered)
		}
	}
}

// An urgent writer (a heartbeat) gets the next turn before the ordinary
// writers that queued before it, which then go in the order they came; a
// waiter that gives up leaves the queue without losing anyone's turn.
func TestWriterQueueUrgentFirst(t *testing.T) {
	t.Parallel()
	db, err := Open(filepath.Join(t.TempDir(), "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d := &sqliteDialect{writerWait: time.Minute}
	ctx := context.Background()
	q := writerQueue(db)

	held, err := d.Begin(ctx, db, dialect.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	turns := make(chan string, 8)
	begin := func(name string, ctx context.Context, opts dialect.TxOptions) {
		tx, err := d.Begin(ctx, db, opts)
		if err != nil {
			turns <- name + ": " + err.Error()
			return
		}
		turns <- name
		if err := tx.Rollback(); err != nil {
			t.Error(err)
		}
	}
	for i, name := range []string{"first", "second"} {
		go begin(name, ctx, dialect.TxOptions{})
		awaitWaiting(t, q, 0, i+1)
	}
	gone, giveUp := context.WithCancel(ctx)
	go begin("gone", gone, dialect.TxOptions{})
	awaitWaiting(t, q, 0, 3)
	go begin("heartbeat", ctx, dialect.TxOptions{Urgent: true})
	awaitWaiting(t, q, 1, 3)
	giveUp()
	if got := <-turns; !strings.HasPrefix(got, "gone: ") || !strings.HasSuffix(got, context.Canceled.Error()) {
		t.Fatalf("the waiter that gave up: %q", got)
	}
	awaitWaiting(t, q, 1, 2)
	if err := held.Commit(); err != nil {
		t.Fatal(err)
	}
	var order []string
	for range 3 {
		order = append(order, <-turns)
	}
	if want := []string{"heartbeat", "first", "second"}; !slices.Equal(order, want) {
		t.Fatalf("turns %q, want %q", order, want)
	}
	awaitWaiting(t, q, 0, 0)
	tx, err := d.Begin(ctx, db, dialect.TxOptions{})
	if err != nil {
		t.Fatalf("Begin once everyone had their turn: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
}
