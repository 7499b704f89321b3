package dialect

import (
	"errors"
	"strings"
)

// RowLocker is an optional capability of a Dialect: a statement that
// locks the rows a claim would take without writing them. The core finds
// it by type assertion (d.(RowLocker)).
//
// A claim of flow control's lanes writes each lane it takes again at its
// end where the lane's turn differs from the back of the line (a lane it
// found empty, one whose rate is spent). Where the database has UPDATE
// ... RETURNING, Claim takes and marks the lanes in one statement, and
// locking them instead would cost a statement more whenever no lane needs
// writing again. Where it has not, Claim is three statements (a locking
// read, the update, a read of the rows as updated) and LockRows one: the
// core then locks the lanes and writes each once, at the claim's end.
// It claims items with it too: a locking read of the whole rows and the
// database clock, then its own update of them, with that clock's reading
// bound as the claim's time, returning the rows as that update makes
// them (two statements where Claim is three). Without it the core takes
// the lanes and the items with Claim.
//
// MySQL (and MariaDB) implement it.
type RowLocker interface {
	// LockRows returns the statement, with its arguments in order, that
	// reads spec.Returning (columns or expressions, evaluated before any
	// change) of up to spec.Limit rows of spec.Table meeting spec.Filter,
	// in spec.OrderBy order, and holds them until the caller's
	// transaction ends, passing over rows another transaction holds
	// without waiting for them, as Claim does. Set and SetArgs are not
	// used.
	LockRows(spec ClaimSpec) (stmt string, args []any, err error)
}

// ValidateLock reports what spec lacks for LockRows.
func (s ClaimSpec) ValidateLock() error {
	switch {
	case s.Limit < 1:
		return errors.New("limit must be at least 1")
	case s.Table == "" || s.Filter == "" || s.OrderBy == "":
		return errors.New("table, filter and order by are all required")
	case len(s.Returning) == 0:
		return errors.New("no returning columns")
	}
	return nil
}

// Locked returns the SELECT of spec.Returning of the rows LockRows
// locks, ended by limit (the dialect's Limit(spec.Limit)) and, after it,
// lock (the dialect's locking clause): the part every dialect's LockRows
// shares.
func (s ClaimSpec) Locked(limit, lock string) string {
	return "SELECT " + strings.Join(s.Returning, ", ") + " FROM " + s.Table + " WHERE " + s.Filter + " ORDER BY " + s.OrderBy + limit + lock
}
