package postgres

import (
	"slices"
	"strconv"

	"github.com/plenumdb/plenum/dialect"
)

// PurgeSQL deletes a retention batch, and its dependents, in one
// statement: one round trip and one commit, where a read of ids and a
// transaction of two deletes cost five round trips. The ids are read
// through the index of spec.OrderBy, oldest first (without an ORDER BY
// the read is a sequential scan from wherever the last one stopped, which
// with autovacuum behind walks the dead rows of earlier batches), taken
// with FOR UPDATE SKIP LOCKED so that concurrent purgers share the work,
// and bound to the DELETE as one array (ARRAY(SELECT ...)), so that the
// delete goes by primary key rather than a join the planner might hash
// against the whole table. The DELETE checks spec.Cond again on the row
// it locked; the dependents' DELETE takes the ids the first one returned
// as an array too (one DELETE per dependent table), so that it reads them by its key's index, not by a
// hash join against its whole table.
func (d *pgDialect) PurgeSQL(spec dialect.PurgeSpec) (string, []any) {
	q := "WITH gone AS (DELETE FROM " + spec.Table + " WHERE " + spec.Key + " = ANY (ARRAY(SELECT " + spec.Key +
		" FROM " + spec.Table + " WHERE " + spec.Cond + " ORDER BY " + spec.OrderBy + d.Limit(spec.Limit) +
		" FOR UPDATE SKIP LOCKED)) AND " + spec.Cond + " RETURNING " + spec.Key + ")"
	for i, dep := range spec.Dependents {
		q += ", dependents" + strconv.Itoa(i) + " AS (DELETE FROM " + dep.Table + " WHERE " + dep.Key + " = ANY (ARRAY(SELECT " + spec.Key + " FROM gone)))"
	}
	q += " SELECT COUNT(*) FROM gone"
	return q, slices.Concat(spec.CondArgs, spec.CondArgs)
}

var _ dialect.Purger = theDialect
