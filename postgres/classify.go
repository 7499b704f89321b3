package postgres

import (
	"context"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
)

// SQLSTATE codes the dialect acts on.
const (
	codeSerializationFailure = "40001"
	codeDeadlockDetected     = "40P01"
	codeLockNotAvailable     = "55P03"
	codeUniqueViolation      = "23505"
	// The transaction's outcome is unknown (CockroachDB reports an
	// ambiguous commit with it).
	codeCompletionUnknown = "40003"
	codeAdminShutdown     = "57P01"
	codeCrashShutdown     = "57P02"
	codeCannotConnectNow  = "57P03"
	codeQueryCanceled     = "57014"
)

// Classify maps PostgreSQL's errors for the core:
//
//   - 40001 (serialization failure), 40P01 (deadlock) and 55P03 (lock not
//     available: NOWAIT, lock_timeout) are Retryable: the server has
//     aborted the statement, and the core rolls back and runs the whole
//     transaction again.
//   - 23505 is UniqueViolation.
//   - Class 08 (connection exception), 57P01/57P02/57P03 (the server is
//     shutting down, crashed or starting), 40003 (completion unknown), a
//     connection pgx has closed, and the network errors every driver shares
//     are ConnectionLost: at commit the outcome is unknown
//     (core.ErrCommitUnknown), elsewhere the transaction is run again.
//   - Everything else is Other, and is not retried: 57014 (statement
//     timeout or cancel) included, and a cancelled or expired context.
func (d *pgDialect) Classify(err error) dialect.ErrorClass {
	if err == nil {
		return dialect.Other
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return dialect.Other
	}
	if code := sqlState(err); code != "" {
		switch code {
		case codeSerializationFailure, codeDeadlockDetected, codeLockNotAvailable:
			return dialect.Retryable
		case codeUniqueViolation:
			return dialect.UniqueViolation
		case codeAdminShutdown, codeCrashShutdown, codeCannotConnectNow, codeCompletionUnknown:
			return dialect.ConnectionLost
		}
		if strings.HasPrefix(code, "08") {
			return dialect.ConnectionLost
		}
		return dialect.Other
	}
	if errors.Is(err, pgconn.ErrConnClosed) || sqlkit.IsConnectionLost(err) {
		return dialect.ConnectionLost
	}
	return dialect.Other
}

// sqlState returns the SQLSTATE code of the server error err wraps, or ""
// when err did not come from the server.
func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}
