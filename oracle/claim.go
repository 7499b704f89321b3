package oracle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	goora "github.com/sijms/go-ora/v2"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
)

// maxClaimOut is the size of the claim block's OUT bind: MaxInList
// 16-byte keys, within PL/SQL's 32,767-byte RAW.
const maxClaimOut = 16 * MaxInList

// Claim takes up to spec.Limit rows in two round trips of the caller's
// transaction: a PL/SQL block that locks and updates them and hands back
// their keys, then a SELECT of the claimed rows by key. See the package
// doc for why the claim has this shape. The key column must be RAW (a
// UUID column), and spec.Limit at most MaxInList.
func (d *oraDialect) Claim(ctx context.Context, q dialect.Querier, spec dialect.ClaimSpec) (*sql.Rows, error) {
	if q == nil {
		return nil, errors.New("oracle: claim: nil querier")
	}
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("oracle: claim: %w", err)
	}
	if spec.Limit > MaxInList {
		return nil, fmt.Errorf("oracle: claim: limit %d is above %d", spec.Limit, MaxInList)
	}
	block, args := claimBlock(spec)
	var out []byte
	args = append(args, goora.Out{Dest: &out, Size: maxClaimOut})
	if _, err := q.ExecContext(ctx, d.Rebind(block), args...); err != nil {
		return nil, err
	}
	keys, err := claimedKeys(out)
	if err != nil {
		return nil, fmt.Errorf("oracle: claim: %w", err)
	}
	returning := strings.Join(spec.Returning, ", ")
	if len(keys) == 0 {
		// The caller reads columns, so give it the right ones, and no row.
		return q.QueryContext(ctx, "SELECT "+returning+" FROM "+spec.Table+" WHERE 1 = 0")
	}
	return q.QueryContext(ctx, d.Rebind(claimRead(spec, len(keys))), keys...)
}

// claimBlock renders the claim's PL/SQL block, with '?' placeholders, and
// the arguments of all but its last placeholder (the OUT bind of the
// claimed keys, one after another):
//
//	DECLARE
//	  TYPE plenum_keys IS TABLE OF items.id%TYPE;
//	  picked plenum_keys;
//	  taken plenum_keys := plenum_keys();
//	  packed RAW(16000);
//	  CURSOR pick IS SELECT id FROM items WHERE <seek> AND <filter>
//	    ORDER BY <order> FOR UPDATE SKIP LOCKED;
//	BEGIN
//	  OPEN pick;
//	  FETCH pick BULK COLLECT INTO picked LIMIT n;
//	  CLOSE pick;
//	  IF picked.COUNT > 0 THEN
//	    FORALL i IN 1 .. picked.COUNT
//	      UPDATE items SET <set> WHERE id = picked(i) AND <recheck>
//	      RETURNING id BULK COLLECT INTO taken;
//	  END IF;
//	  FOR i IN 1 .. taken.COUNT LOOP
//	    IF i = 1 THEN packed := taken(i); ELSE packed := UTL_RAW.CONCAT(packed, taken(i)); END IF;
//	  END LOOP;
//	  :out := packed;
//	END;
func claimBlock(spec dialect.ClaimSpec) (string, []any) {
	where, order, args, recheck := claimSeek(spec)
	var b strings.Builder
	b.WriteString("DECLARE\n")
	b.WriteString("  TYPE plenum_keys IS TABLE OF " + spec.Table + "." + spec.Key + "%TYPE;\n")
	b.WriteString("  picked plenum_keys;\n")
	b.WriteString("  taken plenum_keys := plenum_keys();\n")
	b.WriteString("  packed RAW(" + strconv.Itoa(maxClaimOut) + ");\n")
	b.WriteString("  CURSOR pick IS SELECT " + spec.Key + " FROM " + spec.Table + " WHERE " + where +
		" ORDER BY " + order + " FOR UPDATE SKIP LOCKED;\n")
	b.WriteString("BEGIN\n")
	b.WriteString("  OPEN pick;\n")
	b.WriteString("  FETCH pick BULK COLLECT INTO picked LIMIT " + strconv.Itoa(spec.Limit) + ";\n")
	b.WriteString("  CLOSE pick;\n")
	b.WriteString("  IF picked.COUNT > 0 THEN\n")
	b.WriteString("    FORALL i IN 1 .. picked.COUNT\n")
	b.WriteString("      UPDATE " + spec.Table + " SET " + spec.Set + " WHERE " + spec.Key + " = picked(i)")
	if recheck != "" {
		b.WriteString(" AND " + recheck)
	}
	b.WriteString("\n      RETURNING " + spec.Key + " BULK COLLECT INTO taken;\n")
	b.WriteString("  END IF;\n")
	b.WriteString("  FOR i IN 1 .. taken.COUNT LOOP\n")
	b.WriteString("    IF i = 1 THEN packed := taken(i); ELSE packed := UTL_RAW.CONCAT(packed, taken(i)); END IF;\n")
	b.WriteString("  END LOOP;\n")
	b.WriteString("  ? := packed;\n")
	b.WriteString("END;")
	args = append(args, spec.SetArgs...)
	return b.String(), args
}

// claimSeek returns the cursor's condition and ORDER BY list with their
// arguments, and the condition the UPDATE re-checks. With spec.Seek set
// (and shaped as the contract says), the cursor also compares the
// index's expressions for the equality columns and orders by its
// expressions for the rest, the exact expressions of the function-based
// index CreateIndex writes for it, so that the optimizer can read the
// index in claim order and stop after n rows; the filter itself stays, so
// the rows taken are the same either way.
func claimSeek(spec dialect.ClaimSpec) (where, order string, args []any, recheck string) {
	where, order = spec.Filter, spec.OrderBy
	args = slices.Clone(spec.FilterArgs)
	ix := spec.Seek
	if ix == nil || len(ix.Where) == 0 {
		return where, order, args, ""
	}
	recheck = condition(ix.Where)
	orderCols := splitList(spec.OrderBy)
	eq := len(ix.Columns) - len(orderCols)
	if eq < 0 || eq > len(spec.FilterArgs) || !slices.Equal(ix.Columns[eq:], orderCols) {
		return where, order, args, recheck
	}
	var seek []string
	for _, c := range ix.Columns[:eq] {
		seek = append(seek, seekExpr(ix.Where, c)+" = ?")
	}
	exprs := make([]string, len(orderCols))
	for i, c := range orderCols {
		exprs[i] = seekExpr(ix.Where, c)
	}
	if len(seek) > 0 {
		where = strings.Join(seek, " AND ") + " AND " + where
		args = append(slices.Clone(spec.FilterArgs[:eq]), spec.FilterArgs...)
	}
	return where, strings.Join(exprs, ", "), args, recheck
}

// splitList splits a plain column list ("priority, available_at, id").
func splitList(s string) []string {
	parts := strings.Split(s, ",")
	for i, p := range parts {
		parts[i] = strings.TrimSpace(p)
	}
	return parts
}

// claimRead is the SELECT of the claimed rows by key, in claim order.
func claimRead(spec dialect.ClaimSpec, n int) string {
	return "SELECT " + strings.Join(spec.Returning, ", ") + " FROM " + spec.Table +
		" WHERE " + spec.Key + " IN (" + sqlkit.Placeholders(n) + ") ORDER BY " + spec.OrderBy
}

// claimedKeys splits the claim block's OUT value into 16-byte keys.
func claimedKeys(out []byte) ([]any, error) {
	if len(out)%16 != 0 {
		return nil, fmt.Errorf("claimed keys: %d bytes are not 16-byte keys", len(out))
	}
	keys := make([]any, 0, len(out)/16)
	for i := 0; i < len(out); i += 16 {
		keys = append(keys, slices.Clone(out[i:i+16]))
	}
	return keys, nil
}
