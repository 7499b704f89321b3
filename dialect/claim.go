package dialect

import (
	"errors"
	"fmt"
)

// ClaimSpec is what the core asks of a claim. Every SQL fragment is written
// with '?' placeholders; the dialect assembles the fragments into its own
// statement shape, orders their arguments, and rebinds the result.
type ClaimSpec struct {
	// Table is the items table (a safe identifier).
	Table string
	// Filter is the boolean condition a claimable row meets, with FilterArgs.
	Filter     string
	FilterArgs []any
	// OrderBy is the ORDER BY list that decides which rows go first.
	OrderBy string
	// Limit is the most rows to take; always at least 1.
	Limit int
	// Set is the assignment list applied to each claimed row, with SetArgs.
	Set     string
	SetArgs []any
	// Returning lists the columns to return, in order, of each claimed row
	// after Set was applied.
	Returning []string
	// Key is the primary key column.
	Key string
	// Seek, when set, is the partial index that serves the claim: Filter
	// includes its conditions (Where), compares its first columns for
	// equality, one each, with the first FilterArgs, in order, and OrderBy
	// lists its remaining columns. A dialect that stands in for partial
	// indexes with expression indexes (Oracle) writes its claim through
	// the index's expressions, so that the optimizer can use it. Other
	// dialects ignore it.
	Seek *Index
}

// Validate reports what spec lacks, so that a dialect's Claim refuses it
// before it writes any SQL.
func (s ClaimSpec) Validate() error {
	switch {
	case s.Limit < 1:
		return fmt.Errorf("limit %d, must be at least 1", s.Limit)
	case s.Table == "" || s.Key == "" || s.Set == "" || s.Filter == "" || s.OrderBy == "":
		return errors.New("table, key, set, filter and order by are all required")
	case len(s.Returning) == 0:
		return errors.New("no returning columns")
	}
	return nil
}

// Candidates returns the SELECT of the keys a claim would take, in claim
// order, ended by limit (the dialect's Limit(spec.Limit)): the part every
// dialect's claim statement shares, to wrap in its own locking and update.
func (s ClaimSpec) Candidates(limit string) string {
	return "SELECT " + s.Key + " FROM " + s.Table + " WHERE " + s.Filter + " ORDER BY " + s.OrderBy + limit
}
