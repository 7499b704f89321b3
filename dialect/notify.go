package dialect

import (
	"context"
	"database/sql"
)

// Notifier is an optional capability of a Dialect: wake-ups that cross
// processes. The core finds it by type assertion (d.(Notifier)); a dialect
// without it still works, its workers finding other processes' items by
// polling alone. A wake-up is only ever a hint that items may be waiting:
// one lost (a listener reconnecting, a notification dropped) costs latency,
// never an item, because workers poll as well.
//
// PostgreSQL implements it with NOTIFY and LISTEN. CockroachDB does not
// (it has no LISTEN or NOTIFY), and neither do MySQL, MariaDB or SQLite.
type Notifier interface {
	// Notify sends payload on channel from inside the transaction q, so
	// that listeners receive it when q commits, and never if it rolls
	// back. channel is a safe identifier chosen by the core (derived from
	// the table prefix); the dialect may shorten it to fit its limits, as
	// long as Listen maps it the same way. payload is a queue name: valid
	// UTF-8 without NUL, at most a few hundred bytes.
	Notify(ctx context.Context, q Querier, channel, payload string) error

	// Listen holds a session of its own on db, listens on channel, calls
	// ready once it listens, and then calls deliver with the payload of
	// each notification, in the order they arrive (both called from the
	// goroutine that called Listen, never after it returned),
	// until ctx ends (it then returns ctx's error) or the session fails
	// (it returns why). It must not return the listening session to db's
	// pool. The core calls Listen again, after a backoff, when it returns
	// before ctx ends: reconnecting is the core's, not the dialect's.
	Listen(ctx context.Context, db *sql.DB, channel string, ready func(), deliver func(payload string)) error
}
