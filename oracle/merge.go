package oracle

import (
	"strconv"
	"strings"
)

// InsertIgnore returns a MERGE that inserts the n rows whose conflict
// columns match no existing row and skips the others:
//
//	MERGE INTO t USING (
//	  SELECT c1, ... FROM (
//	    SELECT r.*, ROW_NUMBER() OVER (PARTITION BY k1, k2,
//	      CASE WHEN k1 IS NULL OR k2 IS NULL THEN plenum_n END ORDER BY plenum_n) plenum_dup
//	    FROM (SELECT e1 c1, ..., 1 plenum_n FROM dual UNION ALL ...) r
//	  ) WHERE plenum_dup = 1
//	) s ON (t.k1 = s.k1 AND t.k2 = s.k2)
//	WHEN NOT MATCHED THEN INSERT (c1, ...) VALUES (s.c1, ...)
//
// Rows affected is the number of rows inserted. Two rows of one statement
// with the same key would both be "not matched" and the second would fail
// with ORA-00001, so the source keeps the first of each key (in the order
// given, as ON CONFLICT DO NOTHING would); rows with a NULL in a conflict
// column are all kept, since NULL keys never match. A row of another
// transaction that commits the same key after this statement began is not
// seen by the ON clause, and the insert then fails with ORA-00001 on the
// conflict index: Classify makes that retryable (see the package doc).
// The result is already rebound. n below 1 gives a statement the server
// rejects.
func (d *oraDialect) InsertIgnore(table string, columns []string, row string, n int, conflict []string) string {
	exprs := splitTop(row)
	var src strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			src.WriteString(" UNION ALL ")
		}
		src.WriteString("SELECT ")
		for j, c := range columns {
			if j > 0 {
				src.WriteString(", ")
			}
			e := "NULL"
			if j < len(exprs) {
				e = exprs[j]
			}
			src.WriteString(e + " " + c)
		}
		src.WriteString(", " + strconv.Itoa(i+1) + " plenum_n FROM dual")
	}
	var b strings.Builder
	b.WriteString("MERGE INTO " + table + " t USING (SELECT " + strings.Join(columns, ", ") + " FROM (SELECT r.*, ROW_NUMBER() OVER (")
	if len(conflict) > 0 {
		nulls := make([]string, len(conflict))
		for i, k := range conflict {
			nulls[i] = k + " IS NULL"
		}
		b.WriteString("PARTITION BY " + strings.Join(conflict, ", ") + ", CASE WHEN " + strings.Join(nulls, " OR ") + " THEN plenum_n END ")
	} else {
		b.WriteString("PARTITION BY plenum_n ")
	}
	b.WriteString("ORDER BY plenum_n) plenum_dup FROM (" + src.String() + ") r) WHERE plenum_dup = 1) s ON (")
	if len(conflict) == 0 {
		b.WriteString("1 = 0")
	}
	for i, k := range conflict {
		if i > 0 {
			b.WriteString(" AND ")
		}
		b.WriteString("t." + k + " = s." + k)
	}
	b.WriteString(") WHEN NOT MATCHED THEN INSERT (" + strings.Join(columns, ", ") + ") VALUES (")
	for i, c := range columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("s." + c)
	}
	b.WriteString(")")
	return d.Rebind(b.String())
}

// splitTop splits an expression list at its top-level commas: those
// outside parentheses and quotes.
func splitTop(list string) []string {
	var (
		out   []string
		depth int
		start int
	)
	for i := 0; i < len(list); i++ {
		switch c := list[i]; c {
		case '\'', '"':
			for i++; i < len(list); i++ {
				if list[i] == c {
					if i+1 < len(list) && list[i+1] == c {
						i++
						continue
					}
					break
				}
			}
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(list[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(list[start:]))
}
