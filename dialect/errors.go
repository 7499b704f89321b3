package dialect

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"
)

// ErrorClass is what an error means to the core.
type ErrorClass int

const (
	// Other errors surface to the caller unchanged (wrapped).
	Other ErrorClass = iota
	// Retryable errors (serialization failures, deadlocks, lock timeouts,
	// SQLite's BUSY) mean the transaction was or must be rolled back and may
	// be run again from the start.
	Retryable
	// UniqueViolation means a unique index refused a row.
	UniqueViolation
	// ConnectionLost means the connection broke. At commit this makes the
	// outcome unknown: the core reports ErrCommitUnknown instead of retrying.
	ConnectionLost
)

// String names the class, for logs.
func (c ErrorClass) String() string {
	switch c {
	case Retryable:
		return "retryable"
	case UniqueViolation:
		return "unique-violation"
	case ConnectionLost:
		return "connection-lost"
	}
	return "other"
}

// IsConnectionLost reports whether err says that the connection to the
// database broke, in the ways every driver shares (database/sql's bad
// connection, an unexpected EOF, a network error). Dialects call it from
// Classify and add their own driver's codes.
func IsConnectionLost(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// ErrUnknownDialect is returned by Lookup for a name no package registered.
var ErrUnknownDialect = errors.New("dialect: unknown dialect")
