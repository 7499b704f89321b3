package cockroach

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/plenumdb/plenum/dialect"
)

// lockPause is the wait before Lock tries again after a transient error.
const lockPause = 50 * time.Millisecond

// Lock takes the lock called name, waiting as long as ctx allows.
//
// CockroachDB's pg_advisory_lock is a stub that locks nothing
// (cockroachdb/cockroach#13546), so the lock is a row instead: on a session
// of its own, opened with conn's settings, Lock begins a transaction and
// inserts name into the lock table (LockTable, created if needed).
// Another Lock of the same name inserts the same key and waits on the
// uncommitted row; unlock rolls the transaction back, and the row is never
// committed, so the table stays empty. If the process dies the session
// ends and the server rolls the transaction back, releasing the lock as a
// session lock would be. The session is separate so that conn stays free
// for the migration's own statements (DDL here is not transactional, and
// statements on conn would otherwise run inside the lock's transaction);
// it needs conn to be a pgx connection. The same mechanism works on
// PostgreSQL, where the tests exercise it.
func (d *crdbDialect) Lock(ctx context.Context, conn *sql.Conn, name string) (func(context.Context) error, error) {
	if conn == nil {
		return nil, errors.New("cockroach: lock: nil *sql.Conn")
	}
	pc, err := d.lockSession(ctx, conn)
	if err != nil {
		return nil, fmt.Errorf("cockroach: lock %q: %w", name, err)
	}
	closeSession := func() { _ = pc.Close(context.Background()) }
	for {
		tx, err := pc.Begin(ctx)
		if err == nil {
			_, err = tx.Exec(ctx, "INSERT INTO "+d.lockTable+" (name) VALUES ($1)", name)
			if err == nil {
				return func(ctx context.Context) error {
					rerr := tx.Rollback(ctx)
					// Closing the session releases the lock even when the
					// rollback failed.
					if cerr := pc.Close(ctx); cerr != nil {
						return fmt.Errorf("cockroach: unlock %q: %w", name, errors.Join(rerr, cerr))
					}
					return nil
				}, nil
			}
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
		if ctx.Err() != nil {
			closeSession()
			return nil, fmt.Errorf("cockroach: lock %q: %w (%v)", name, ctx.Err(), err)
		}
		if d.Classify(err) != dialect.Retryable {
			closeSession()
			if d.Classify(err) == dialect.UniqueViolation {
				return nil, fmt.Errorf("cockroach: lock %q: a committed row in %s holds it (Lock never commits one; someone wrote it by hand): delete it: %w", name, d.lockTable, err)
			}
			return nil, fmt.Errorf("cockroach: lock %q: %w", name, err)
		}
		if err := sleep(ctx, lockPause); err != nil {
			closeSession()
			return nil, fmt.Errorf("cockroach: lock %q: %w", name, err)
		}
	}
}

// lockSession opens the session that holds a lock: a new connection with
// conn's configuration, no statement, lock or idle timeouts (the wait is
// bounded by the context, the hold by unlock), and the lock table in its
// current schema.
func (d *crdbDialect) lockSession(ctx context.Context, conn *sql.Conn) (*pgx.Conn, error) {
	var cfg *pgx.ConnConfig
	err := conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("the connection's driver is %T; the lock needs a pgx connection (sql.Open(%q, dsn))", dc, DriverName)
		}
		cfg = c.Conn().Config()
		return nil
	})
	if err != nil {
		return nil, err
	}
	pc, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open the lock's session: %w", err)
	}
	for _, set := range []string{"SET statement_timeout = 0", "SET lock_timeout = 0", "SET idle_in_transaction_session_timeout = 0"} {
		if _, err := pc.Exec(ctx, set); err != nil {
			_ = pc.Close(context.Background())
			return nil, fmt.Errorf("%s: %w", set, err)
		}
	}
	create := "CREATE TABLE IF NOT EXISTS " + d.lockTable + " (name varchar(255) NOT NULL PRIMARY KEY)"
	for attempt := 1; ; attempt++ {
		_, err := pc.Exec(ctx, create)
		if err == nil {
			return pc, nil
		}
		// Concurrent creators of the same table may collide on the
		// catalog (PostgreSQL: 23505, 42P07, or 42710 for the table's row
		// type; CockroachDB: 40001).
		class := d.Classify(err)
		state := sqlState(err)
		retry := class == dialect.Retryable || class == dialect.UniqueViolation || state == "42P07" || state == "42710"
		if !retry || attempt == 5 || ctx.Err() != nil {
			_ = pc.Close(context.Background())
			return nil, fmt.Errorf("create the lock table %s: %w", d.lockTable, err)
		}
		if err := sleep(ctx, lockPause); err != nil {
			_ = pc.Close(context.Background())
			return nil, err
		}
	}
}

// sqlState returns the SQLSTATE of the server error err wraps, or "".
func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
