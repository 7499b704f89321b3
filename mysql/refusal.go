package mysql

import (
	"errors"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/plenumdb/plenum/dialect"
)

// Refusal tells the errors by which the server turns a client away: too
// many connections (1040: max_connections; 1203 and 1226: the account's
// own connection limits) are RefusedResources; access denied to the
// database (1044), the account (1045) or a table (1142) are
// RefusedAccess. A dial that failed is recognized by dialect.RefusalOf.
func (d *mysqlDialect) Refusal(err error) dialect.Refusal {
	var me *gomysql.MySQLError
	if !errors.As(err, &me) {
		return dialect.NotRefused
	}
	switch me.Number {
	case errTooManyConnections, errTooManyUserConns, errUserLimitReached:
		return dialect.RefusedResources
	case errDBAccessDenied, errAccessDenied, errTableAccessDenied:
		return dialect.RefusedAccess
	}
	return dialect.NotRefused
}
