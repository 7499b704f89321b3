package testdb

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/plenumdb/plenum/dialect"
)

// busyWait is how long CheckPoolBound lets a caller wait for a connection
// of a full pool: the wait can only end in a timeout, so it needs no more
// than to show the caller did wait.
const busyWait = 100 * time.Millisecond

// CheckOpenBound opens dsn with open, a dialect's Open, closes it when the
// test ends, checks that its pool is bounded at dialect.DefaultMaxOpenConns
// (CheckPoolBound), and returns it.
func CheckOpenBound(t *testing.T, open func(string) (*sql.DB, error), dsn string) *sql.DB {
	t.Helper()
	db, err := open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	CheckPoolBound(t, db, dialect.DefaultMaxOpenConns)
	return db
}

// CheckPoolBound checks that db's pool opens at most limit connections:
// db.Stats says so, limit connections taken at once all open, and a caller
// asking for one more waits until one comes back instead of opening it.
func CheckPoolBound(t *testing.T, db *sql.DB, limit int) {
	t.Helper()
	if got := db.Stats().MaxOpenConnections; got != limit {
		t.Fatalf("the pool opens at most %d connections (0: no bound), want %d", got, limit)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conns := make([]*sql.Conn, 0, limit)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range limit {
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatalf("connection %d of %d: %v", len(conns)+1, limit, err)
		}
		if err := c.PingContext(ctx); err != nil {
			t.Fatalf("connection %d of %d: %v", len(conns)+1, limit, err)
		}
		conns = append(conns, c)
	}
	busy, cancelBusy := context.WithTimeout(ctx, busyWait)
	defer cancelBusy()
	extra, err := db.Conn(busy)
	if err == nil {
		extra.Close()
		t.Fatalf("a connection past the %d the pool allows was opened", limit)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a connection past the %d the pool allows: %v, want a wait for one to come back", limit, err)
	}
	waiting := make(chan error, 1)
	go func() {
		c, err := db.Conn(ctx)
		if err == nil {
			err = c.Close()
		}
		waiting <- err
	}()
	conns[0].Close()
	conns = conns[1:]
	if err := <-waiting; err != nil {
		t.Fatalf("a connection given back did not go to the caller waiting for one: %v", err)
	}
}
