package mysql

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
)

// Server error numbers the dialect tells apart.
const (
	errDupEntry            = 1062 // ER_DUP_ENTRY
	errDupEntryWithKeyName = 1586 // ER_DUP_ENTRY_WITH_KEY_NAME
	errLockWaitTimeout     = 1205 // ER_LOCK_WAIT_TIMEOUT: only the statement was rolled back
	errLockDeadlock        = 1213 // ER_LOCK_DEADLOCK: the transaction was rolled back
	errServerShutdown      = 1053 // ER_SERVER_SHUTDOWN
	errConnectionKilled    = 1927 // MariaDB ER_CONNECTION_KILLED
	errServerGone          = 2006 // CR_SERVER_GONE_ERROR, as some proxies send it
	errServerLost          = 2013 // CR_SERVER_LOST, likewise
	errClientInactive      = 4031 // MySQL ER_CLIENT_INTERACTION_TIMEOUT: disconnected for inactivity
	errTooManyConnections  = 1040 // ER_CON_COUNT_ERROR: max_connections reached
	errTooManyUserConns    = 1203 // ER_TOO_MANY_USER_CONNECTIONS: the user's max_user_connections
	errUserLimitReached    = 1226 // ER_USER_LIMIT_REACHED: the account's MAX_USER_CONNECTIONS and the like
	errAccessDenied        = 1045 // ER_ACCESS_DENIED_ERROR: wrong user or password
)

// Begin starts a transaction at READ COMMITTED (the driver sends SET
// TRANSACTION ISOLATION LEVEL READ COMMITTED before START TRANSACTION). Under
// the servers' default, REPEATABLE READ, a claim that scans to the end of the
// claimable range takes gap locks that make producers' inserts wait and
// claimers deadlock; READ COMMITTED takes no gap locks for these reads and
// releases the locks of rows that do not match.
func (d *mysqlDialect) Begin(ctx context.Context, db *sql.DB, opts dialect.TxOptions) (dialect.Tx, error) {
	if db == nil {
		return nil, errors.New("mysql: begin: nil *sql.DB")
	}
	tx, err := db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted, ReadOnly: opts.ReadOnly})
	if err != nil {
		// Not tx itself: a nil *sql.Tx in a Tx interface is not nil.
		return nil, err
	}
	return tx, nil
}

// Classify maps the server's and the driver's errors. A deadlock (1213)
// and a lock wait timeout (1205) are retryable: the core rolls the
// transaction back (after 1205 only the statement was rolled back, and the
// transaction still holds its locks) and runs it again from the start.
// Nothing else is retried. Duplicate keys are UniqueViolation. A connection
// that broke (the driver's invalid connection, a bad connection, a network
// error, the server's "connection killed", "shutdown in progress" or
// "disconnected for inactivity") is ConnectionLost.
func (d *mysqlDialect) Classify(err error) dialect.ErrorClass {
	if err == nil {
		return dialect.Other
	}
	var me *gomysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case errLockDeadlock, errLockWaitTimeout:
			return dialect.Retryable
		case errDupEntry, errDupEntryWithKeyName:
			return dialect.UniqueViolation
		case errServerShutdown, errConnectionKilled, errServerGone, errServerLost, errClientInactive:
			return dialect.ConnectionLost
		}
		return dialect.Other
	}
	if errors.Is(err, gomysql.ErrInvalidConn) || sqlkit.IsConnectionLost(err) {
		return dialect.ConnectionLost
	}
	return dialect.Other
}

// maxLockName is the longest name GET_LOCK takes on MySQL (longer ones fail
// with error 3057).
const maxLockName = 64

// lockPoll is how long one GET_LOCK call waits before Lock checks its
// context again.
const lockPoll = time.Second

// Lock takes the named lock with GET_LOCK on conn, waiting as long as ctx
// allows. GET_LOCK names are server-wide, not per database, so the name is
// qualified with the current database; a name longer than GET_LOCK takes is
// replaced by a hash of it. Each call waits at most a second on the server,
// so that an ended context is noticed within a second without killing
// anything; if the context ends during a call, the driver closes the
// connection, and the server releases the session's locks with it. The lock
// is released by unlock, or when the session ends.
func (d *mysqlDialect) Lock(ctx context.Context, conn *sql.Conn, name string) (func(context.Context) error, error) {
	if conn == nil {
		return nil, errors.New("mysql: lock: nil *sql.Conn")
	}
	var schema sql.NullString
	if err := conn.QueryRowContext(ctx, "SELECT DATABASE()").Scan(&schema); err != nil {
		return nil, fmt.Errorf("mysql: lock %q: %w", name, err)
	}
	key := lockName(schema.String, name)
	for {
		var got sql.NullInt64
		if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(?, ?)", key, int(lockPoll/time.Second)).Scan(&got); err != nil {
			return nil, fmt.Errorf("mysql: lock %q: %w", key, err)
		}
		if !got.Valid {
			return nil, fmt.Errorf("mysql: lock %q: GET_LOCK returned NULL (the server refused the lock)", key)
		}
		if got.Int64 == 1 {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("mysql: lock %q: %w", key, err)
		}
	}
	unlock := func(ctx context.Context) error {
		var released sql.NullInt64
		err := conn.QueryRowContext(ctx, "SELECT RELEASE_LOCK(?)", key).Scan(&released)
		if err != nil {
			if d.Classify(err) == dialect.ConnectionLost {
				return nil // the session ended, and its locks with it
			}
			return fmt.Errorf("mysql: unlock %q: %w", key, err)
		}
		if !released.Valid || released.Int64 != 1 {
			return fmt.Errorf("mysql: unlock %q: this session did not hold the lock", key)
		}
		return nil
	}
	return unlock, nil
}

// lockName qualifies name with the database, within maxLockName bytes.
func lockName(schema, name string) string {
	full := schema + "." + name
	if len(full) <= maxLockName {
		return full
	}
	sum := sha256.Sum256([]byte(full))
	return "plenum." + hex.EncodeToString(sum[:])[:maxLockName-len("plenum.")]
}
