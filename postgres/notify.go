package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/plenumdb/plenum/dialect"
)

// The notifier's statements. LISTEN takes an identifier, not a parameter:
// the channel is appended quoted (pgx.Identifier), so that its case is
// kept and matches pg_notify's text argument exactly.
const (
	notifyStatement = "SELECT pg_notify($1, $2)"
	listenStatement = "LISTEN "
)

var _ dialect.Notifier = theDialect

// Notify sends payload on channel with pg_notify in the transaction q: the
// server delivers it to every session listening on channel when q
// commits, and drops it if q rolls back. The server also folds identical
// notifications of one transaction into one.
func (d *pgDialect) Notify(ctx context.Context, q dialect.Querier, channel, payload string) error {
	if q == nil {
		return errors.New("postgres: notify: nil querier")
	}
	if _, err := q.ExecContext(ctx, notifyStatement, channel, payload); err != nil {
		return fmt.Errorf("postgres: notify: %w", err)
	}
	return nil
}

// Listen takes a connection of its own out of db's pool (db must talk
// through pgx's database/sql adapter, as Check requires), runs LISTEN on
// it, and waits for notifications on that session until ctx ends or the
// session fails. The session is never given back to the pool, where a
// listening session would collect notifications nobody reads: it is
// closed when Listen returns.
func (d *pgDialect) Listen(ctx context.Context, db *sql.DB, channel string, ready func(), deliver func(payload string)) error {
	if db == nil {
		return errors.New("postgres: listen: nil *sql.DB")
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("postgres: listen: %w", err)
	}
	defer conn.Close()
	var cause error
	_ = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			cause = fmt.Errorf("postgres: listen: the connection is a %T, not pgx's (open the database with driver %q)", dc, DriverName)
			return driver.ErrBadConn
		}
		pc := sc.Conn()
		if _, err := pc.Exec(ctx, listenStatement+pgx.Identifier{channel}.Sanitize()); err != nil {
			cause = fmt.Errorf("postgres: listen: %w", err)
			return driver.ErrBadConn
		}
		ready()
		for {
			n, err := pc.WaitForNotification(ctx)
			if err != nil {
				cause = fmt.Errorf("postgres: listen: %w", err)
				// Never pooled again: it listens.
				return driver.ErrBadConn
			}
			deliver(n.Payload)
		}
	})
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return cause
}
