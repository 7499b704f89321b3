// Package plantedclaim wraps a real dialect in one whose claim breaks
// SKIP LOCKED the way some databases that accept the words do, for the
// tests that show such a database refused: NoLock reads the rows it would
// take without locking them (TiDB), Waits locks them without skipping the
// held ones (YugabyteDB under SERIALIZABLE).
package plantedclaim

import (
	"context"
	"database/sql"
	"strings"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
)

// NoLock returns d with a claim that locks and changes nothing: it reads
// the rows it would take and returns them, so that two sessions both get
// the same row.
func NoLock(d dialect.Dialect) dialect.Dialect { return planted{Dialect: d} }

// Waits returns d with a claim that locks its rows with the dialect's lock
// clause and no SKIP LOCKED, and then applies the claim: a second session
// waits for the rows a first one holds.
func Waits(d dialect.Dialect) dialect.Dialect { return planted{Dialect: d, lock: true} }

type planted struct {
	dialect.Dialect
	lock bool
}

// Claim picks the candidates (locking them only if p.lock), applies the
// claim to them if it locked them, and returns them.
func (p planted) Claim(ctx context.Context, q dialect.Querier, spec dialect.ClaimSpec) (*sql.Rows, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	pick := spec.Candidates(p.Limit(spec.Limit))
	if p.lock {
		pick += p.Capabilities().LockClause
	}
	rows, err := q.QueryContext(ctx, p.Rebind(pick), spec.FilterArgs...)
	if err != nil {
		return nil, err
	}
	var ids []any
	for rows.Next() {
		var id any
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	returning := "SELECT " + strings.Join(spec.Returning, ", ") + " FROM " + spec.Table + " WHERE "
	if len(ids) == 0 {
		return q.QueryContext(ctx, returning+"1 = 0")
	}
	in := spec.Key + " IN (" + sqlkit.Placeholders(len(ids)) + ")"
	if p.lock {
		args := append(append([]any{}, spec.SetArgs...), ids...)
		if _, err := q.ExecContext(ctx, p.Rebind("UPDATE "+spec.Table+" SET "+spec.Set+" WHERE "+in), args...); err != nil {
			return nil, err
		}
	}
	return q.QueryContext(ctx, p.Rebind(returning+in), ids...)
}
