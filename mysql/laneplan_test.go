package mysql_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/catalog"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/mysql"
)

// laneCandidatesSQL is the core's read of the first f available items of
// each of m lanes (the lanes claim's "lanes.candidates"), as the store
// under prefix sends it, from the statement catalog.
func laneCandidatesSQL(t *testing.T, prefix string, m, f int) string {
	t.Helper()
	c, err := catalog.New(mysql.Dialect(), core.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	st, ok := c.Statement("lanes.candidates", f, m)
	if !ok {
		t.Fatalf("no lanes.candidates of %d lanes at size %d in the catalog", m, f)
	}
	return st.SQL
}

// digits is 0 to 9, to count rows into an INSERT ... SELECT.
const digits = "(SELECT 0 n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)"

// The lanes claim's read of 10 lanes' first 3 items each, in a queue of
// 10,000 keys of 4 available items and in one of 10 keys of 4,000: in
// both, each lane is read along items_flow ((state, queue, flow_key,
// priority, available_at, id) here, for want of a partial index), or
// items_claim, which leads with the same columns, in claim order with no
// filesort, and, on MariaDB, each lane's read stops
// after its 3 rows: what it reads does not grow with the keys of the
// queue or the items of a key.
func TestExplain_LaneCandidatesFlatInKeys(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	ctx := t.Context()
	d := mysql.Dialect()
	p := newPrefix(t, db)
	if _, err := migrations.Apply(ctx, db, d, p); err != nil {
		t.Fatal(err)
	}
	names := migrations.NamesFor(p)
	const m, f = 10, 3
	numbers := "SELECT a.n + 10*b.n + 100*c.n + 1000*e.n + 10000*g.n AS x FROM " + digits + " a, " + digits + " b, " + digits + " c, " + digits + " e, " + digits + " g"
	for _, q := range []struct {
		name       string
		keys, each int
	}{{"many", 10000, 4}, {"few", 10, 4000}} {
		// Of each key's 5 rows in 5, one is completed.
		if _, err := db.ExecContext(ctx, "INSERT INTO "+names.Items+" (id, queue, kind, priority, state, available_at, attempt, max_attempts, crash_count, created_at, flow_key)"+
			" SELECT UNHEX(REPLACE(UUID(), '-', '')), ?, 'k', x % 3, CASE WHEN (x DIV ?) % 5 = 0 THEN 'completed' ELSE 'available' END,"+
			" UTC_TIMESTAMP(6) - INTERVAL (x % 100) SECOND, 0, 20, 0, UTC_TIMESTAMP(6), CONCAT('k', x % ?)"+
			" FROM ("+numbers+") t WHERE x < ?", q.name, q.keys, q.keys, q.keys*q.each*5/4); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, "ANALYZE TABLE "+names.Items); err != nil {
		t.Fatal(err)
	}
	var version string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	mariadb := strings.Contains(strings.ToLower(version), "mariadb")
	query := laneCandidatesSQL(t, p, m, f)
	index, claim := p+"items_flow", p+"items_claim"
	for _, queue := range []string{"many", "few"} {
		var args []any
		for k := range m {
			args = append(args, queue, fmt.Sprint("k", k))
		}
		plan := explainRows(t, db, "EXPLAIN "+query, args...)
		t.Logf("EXPLAIN of the read of %d lanes' first %d items in queue %s:\n%s", m, f, queue, formatPlan(plan))
		reads := 0
		for _, row := range plan {
			if strings.Contains(row["Extra"], "Using filesort") || strings.Contains(row["Extra"], "Using temporary") {
				t.Errorf("queue %s: the read sorts: %v", queue, row)
			}
			if row["table"] != names.Items {
				continue
			}
			reads++
			// items_claim, (state, flow_key, queue, priority,
			// available_at, id) here, serves the read as well: the
			// same three equalities, then claim order.
			if (row["key"] != index && row["key"] != claim) || row["type"] != "ref" || row["ref"] != "const,const,const" {
				t.Errorf("queue %s: a lane is read through key %q (type %s, ref %s), want a ref on state, queue and flow_key of %s", queue, row["key"], row["type"], row["ref"], index)
			}
		}
		if reads != m {
			t.Errorf("queue %s: %d reads of %s, want one a lane, %d", queue, reads, names.Items, m)
		}
		if !mariadb {
			continue
		}
		var js string
		if err := db.QueryRowContext(ctx, "ANALYZE FORMAT=JSON "+query, args...).Scan(&js); err != nil {
			t.Fatalf("ANALYZE FORMAT=JSON: %v", err)
		}
		read, lanes := analyzedReads(t, js, names.Items, f)
		if lanes != m || read > float64(m*f) {
			t.Errorf("queue %s: ANALYZE shows %d reads of %s, %v rows in all; want %d reading at most %d:\n%s", queue, lanes, names.Items, read, m, m*f, js)
		}
	}
}

// analyzedReads sums, in MariaDB's ANALYZE FORMAT=JSON, the rows actually
// read from table (r_rows times r_loops) and counts the reads, failing
// on any read of more than f rows.
func analyzedReads(t *testing.T, js, table string, f int) (rows float64, reads int) {
	t.Helper()
	var doc any
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("ANALYZE FORMAT=JSON is not JSON: %v", err)
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["table_name"] == table {
				r, _ := v["r_rows"].(float64)
				loops, ok := v["r_loops"].(float64)
				if !ok {
					loops = 1
				}
				if r*loops > float64(f) {
					t.Errorf("a lane's read took %v rows of %s for a limit of %d", r*loops, table, f)
				}
				rows += r * loops
				reads++
			}
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(doc)
	return rows, reads
}
