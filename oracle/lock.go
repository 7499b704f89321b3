package oracle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	goora "github.com/sijms/go-ora/v2"

	"github.com/plenumdb/plenum/dialect"
)

// lockPoll is how long one DBMS_LOCK.REQUEST waits on the server before
// Lock checks its context again.
const lockPoll = time.Second

// maxLockID bounds the lock ids DBMS_LOCK leaves to applications: 0 to
// 1073741823 (higher ids are the ones ALLOCATE_UNIQUE hands out).
const maxLockID = 1 << 30

// DBMS_LOCK.REQUEST results.
const (
	lockGranted  = 0
	lockTimeout  = 1
	lockDeadlock = 2
	lockOwned    = 4
)

// lockRequest and lockRelease call DBMS_LOCK on the session. The lock is
// exclusive and, with release_on_commit false, a session lock: it
// outlives the commits that DDL makes on its own.
const (
	lockRequest = "BEGIN ? := DBMS_LOCK.REQUEST(id => ?, lockmode => DBMS_LOCK.X_MODE, timeout => ?, release_on_commit => FALSE); END;"
	lockRelease = "BEGIN ? := DBMS_LOCK.RELEASE(id => ?); END;"
)

// Lock takes the named lock on conn's session with DBMS_LOCK.REQUEST,
// waiting as long as ctx allows. The name, qualified with the current
// schema, is hashed to a lock id below 2^30 (ALLOCATE_UNIQUE, which maps
// names itself, commits and writes a table, so it is not used); two names
// whose hashes meet share a lock, which only serializes them. Each call
// waits at most a second on the server, so that an ended context is
// noticed. The lock is released by unlock, or when the session ends.
//
// DBMS_LOCK needs EXECUTE on SYS.DBMS_LOCK, which PUBLIC does not have by
// default: the error says which GRANT to ask for.
func (d *oraDialect) Lock(ctx context.Context, conn *sql.Conn, name string) (func(context.Context) error, error) {
	if conn == nil {
		return nil, errors.New("oracle: lock: nil *sql.Conn")
	}
	var schema string
	if err := conn.QueryRowContext(ctx, "SELECT SYS_CONTEXT('USERENV', 'CURRENT_SCHEMA') FROM dual").Scan(&schema); err != nil {
		return nil, fmt.Errorf("oracle: lock %q: %w", name, err)
	}
	id := lockID(schema, name)
	for {
		var res int64
		_, err := conn.ExecContext(ctx, d.Rebind(lockRequest), goora.Out{Dest: &res}, id, int64(lockPoll/time.Second))
		if err != nil {
			return nil, fmt.Errorf("oracle: lock %q (DBMS_LOCK id %d; the user needs GRANT EXECUTE ON SYS.DBMS_LOCK): %w", name, id, err)
		}
		switch res {
		case lockGranted, lockOwned:
			return func(ctx context.Context) error { return d.unlock(ctx, conn, name, id) }, nil
		case lockTimeout, lockDeadlock:
		default:
			return nil, fmt.Errorf("oracle: lock %q: DBMS_LOCK.REQUEST returned %d", name, res)
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("oracle: lock %q: %w", name, err)
		}
	}
}

func (d *oraDialect) unlock(ctx context.Context, conn *sql.Conn, name string, id int64) error {
	var res int64
	if _, err := conn.ExecContext(ctx, d.Rebind(lockRelease), goora.Out{Dest: &res}, id); err != nil {
		if d.Classify(err) == dialect.ConnectionLost {
			return nil // the session ended, and its locks with it
		}
		return fmt.Errorf("oracle: unlock %q: %w", name, err)
	}
	if res != lockGranted {
		return fmt.Errorf("oracle: unlock %q: DBMS_LOCK.RELEASE returned %d (this session did not hold the lock)", name, res)
	}
	return nil
}

// lockID maps a schema-qualified lock name to a DBMS_LOCK id.
func lockID(schema, name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(schema + "." + name))
	return int64(h.Sum64() % maxLockID)
}
