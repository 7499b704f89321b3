package postgres

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/plenumdb/plenum/dialect"
)

// codeInsufficientPrivilege is 42501: the role lacks a right on an object.
const codeInsufficientPrivilege = "42501"

// Refusal tells the errors by which the server turns a client away:
//
//   - class 53 (insufficient resources: 53300 too many connections, a
//     role's CONNECTION LIMIT included; out of memory or disk) is
//     RefusedResources;
//   - class 28 (invalid authorization: a wrong password, no such role, a
//     role without LOGIN) and 42501 (insufficient privilege) are
//     RefusedAccess;
//   - 57P03 (the server is starting up or in recovery), and a connection
//     attempt that failed without the server saying why (pgx's
//     ConnectError around a dial error or a timeout), are
//     RefusedUnreachable.
func (d *pgDialect) Refusal(err error) dialect.Refusal {
	switch code := sqlState(err); {
	case strings.HasPrefix(code, "53"):
		return dialect.RefusedResources
	case strings.HasPrefix(code, "28"), code == codeInsufficientPrivilege:
		return dialect.RefusedAccess
	case code == codeCannotConnectNow:
		return dialect.RefusedUnreachable
	case code != "":
		return dialect.NotRefused
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return dialect.RefusedUnreachable
	}
	return dialect.NotRefused
}
