package dialect

import "errors"

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

// ErrUnknownDialect is returned by Lookup for a name no package registered.
var ErrUnknownDialect = errors.New("dialect: unknown dialect")
