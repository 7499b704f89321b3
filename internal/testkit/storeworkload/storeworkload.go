// Package storeworkload runs every operation of a store, and every read of
// package browse, on a database: what the tests that check every statement
// sent (core's bind counter, the statement catalog's coverage) drive a
// store with.
package storeworkload

import (
	"database/sql"
	"testing"

	"github.com/plenumdb/plenum/dialect"
)

// Run calls every operation of a store on db, of dialect d, once or more,
// on stores of three clock offsets (none, two and four hours ahead), and
// every read of package browse in each of its filter combinations.
func Run(t *testing.T, db *sql.DB, d dialect.Dialect) {
	t.Helper()
	workload(t, db, d)
	workloadMore(t, db, d)
	workloadRuns(t, db, d)
	workloadBrowse(t, db, d)
}

// NoReturning is a dialect without UPDATE ... RETURNING (SQLite's, say),
// for the store's other completion path.
type NoReturning struct{ dialect.Dialect }

// Capabilities are the dialect's, without ReturningUpdate.
func (n NoReturning) Capabilities() dialect.Capabilities {
	c := n.Dialect.Capabilities()
	c.ReturningUpdate = false
	return c
}
