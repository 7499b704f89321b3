// Package storeworkload runs every operation of a store, and every read of
// package browse, on a database: what the tests that check every statement
// sent (core's bind counter, the statement catalog's coverage) drive a
// store with.
package storeworkload

import (
	"context"
	"database/sql"
	"testing"

	"github.com/plenumdb/plenum/core"
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
	workloadFlow(t, db, d)
	workloadSchedules(t, db, d)
	workloadRunContext(t, db, d)
	workloadItemMeta(t, db, d)
	workloadProgress(t, db, d)
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

// fatal returns the check every workload makes of each call: an error
// ends t.
func fatal(t *testing.T) func(error) {
	return func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// open opens a store on db with opts, ending t on an error.
func open(t *testing.T, db *sql.DB, d dialect.Dialect, opts core.Options) *core.Store {
	t.Helper()
	s, err := core.Open(context.Background(), db, d, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
