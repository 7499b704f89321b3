package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/plenumdb/plenum/dialect"
)

// Begin starts a transaction at READ COMMITTED, whatever the session's
// default_transaction_isolation says. Claims need it: under REPEATABLE
// READ or SERIALIZABLE, SKIP LOCKED claims fail with serialization errors in
// about half of all batches, while at READ COMMITTED a locked row is
// re-checked against the claim's filter and the row locks alone keep claims
// exclusive. Read-only transactions begin READ ONLY.
func (d *pgDialect) Begin(ctx context.Context, db *sql.DB, opts dialect.TxOptions) (dialect.Tx, error) {
	if db == nil {
		return nil, errors.New("postgres: begin: nil *sql.DB")
	}
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted, ReadOnly: opts.ReadOnly})
	if err != nil {
		// Not tx itself: a nil *sql.Tx in a Tx interface is not nil.
		return nil, fmt.Errorf("postgres: begin: %w", err)
	}
	return tx, nil
}

// lockKey is the advisory lock key Lock takes for name: the FNV-64a hash of
// "plenum:" and name. It is computed here rather than with the server's
// hashtext(), whose result is not guaranteed to stay the same across major
// versions, so that processes on different server versions agree.
func lockKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte("plenum:"))
	h.Write([]byte(name))
	return int64(h.Sum64())
}

// lockRetryPause is how long Lock waits before asking again after the
// server gave up waiting on its own (lock_timeout, statement_timeout).
const lockRetryPause = 50 * time.Millisecond

// Lock takes the session-level advisory lock lockKey(name) on conn, waiting
// as long as ctx allows. A lock_timeout or statement_timeout of the session
// only makes it ask again; when ctx ends it gives up, and discards conn if
// the wait was interrupted half way, so that a lock granted at the last
// moment dies with the session. The lock is released by unlock, or by the
// server when the session ends. It needs a session of its own: behind a
// pooler in transaction mode (PgBouncer's pool_mode=transaction) session
// locks do not work.
func (d *pgDialect) Lock(ctx context.Context, conn *sql.Conn, name string) (func(context.Context) error, error) {
	if conn == nil {
		return nil, errors.New("postgres: lock: nil *sql.Conn")
	}
	key := lockKey(name)
	for {
		_, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1::bigint)", key)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			discard(conn)
			return nil, fmt.Errorf("postgres: lock %q: %w (%v)", name, ctx.Err(), err)
		}
		switch sqlState(err) {
		case codeLockNotAvailable, codeQueryCanceled:
		default:
			return nil, fmt.Errorf("postgres: lock %q: %w", name, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("postgres: lock %q: %w (%v)", name, ctx.Err(), err)
		case <-time.After(lockRetryPause):
		}
	}
	return func(ctx context.Context) error {
		var released bool
		if err := conn.QueryRowContext(ctx, "SELECT pg_advisory_unlock($1::bigint)", key).Scan(&released); err != nil {
			// The session is in doubt: drop it, and the lock with it.
			discard(conn)
			return fmt.Errorf("postgres: unlock %q: %w", name, err)
		}
		if !released {
			return fmt.Errorf("postgres: unlock %q: the session did not hold the lock", name)
		}
		return nil
	}, nil
}

// discard marks conn broken, so that database/sql closes its session
// (ending the session's locks) instead of pooling it.
func discard(conn *sql.Conn) {
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
}
