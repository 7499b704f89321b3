package sqlkit

import (
	"strconv"
	"strings"

	"github.com/plenumdb/plenum/dialect"
)

// CTEClaim returns the claim of spec as one statement of PostgreSQL's
// family, unbound ('?'), with its arguments: a CTE c picks the rows
// (spec.Candidates, LIMIT spec.Limit, FOR UPDATE SKIP LOCKED), and an
// UPDATE of the same table applies spec.Set to the rows that picked, a
// condition on spec.Key over c, holds, returning spec.Returning. The
// filter's arguments come first (the CTE leads the text), then the
// assignment's. The caller validates spec.
func CTEClaim(spec dialect.ClaimSpec, picked string) (string, []any) {
	stmt := "WITH c AS (" + spec.Candidates(" LIMIT "+strconv.Itoa(spec.Limit)) + " FOR UPDATE SKIP LOCKED)" +
		" UPDATE " + spec.Table + " SET " + spec.Set +
		" WHERE " + picked + " RETURNING " + strings.Join(spec.Returning, ", ")
	args := make([]any, 0, len(spec.FilterArgs)+len(spec.SetArgs))
	args = append(args, spec.FilterArgs...)
	args = append(args, spec.SetArgs...)
	return stmt, args
}
