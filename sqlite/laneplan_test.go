package sqlite_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/catalog"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/sqlite"
)

// The lanes claim's read of 10 lanes' first 3 items each (the catalog's
// "lanes.candidates", as the store sends it), planned by SQLite in a
// queue of 2,000 keys of 4 available items and in one of 10 keys of
// 800 (the plans are the same at five times those, and the rows cost
// seconds with the race detector): in both, each lane is a search of items_flow on (queue,
// flow_key), whose order is the claim's, so that the LIMIT stops it: no
// scan of the table and no sort.
func TestLaneCandidatesPlan_SearchesItemsFlow(t *testing.T) {
	t.Parallel()
	db, _ := openDB(t)
	ctx := t.Context()
	d := sqlite.Dialect()
	const prefix = migrations.DefaultPrefix
	if _, err := migrations.Apply(ctx, db, d, prefix); err != nil {
		t.Fatal(err)
	}
	names := migrations.NamesFor(prefix)
	const m, f = 10, 3
	for _, q := range []struct {
		name       string
		keys, each int
	}{{"many", 2000, 4}, {"few", 10, 800}} {
		// Of each key's rows, one in 5 is completed.
		if _, err := db.ExecContext(ctx, "WITH RECURSIVE g(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM g WHERE x + 1 < ?)"+
			" INSERT INTO "+names.Items+" (id, queue, kind, priority, state, available_at, attempt, max_attempts, crash_count, created_at, flow_key)"+
			" SELECT randomblob(16), ?, 'k', x % 3, CASE WHEN (x / ?) % 5 = 0 THEN 'completed' ELSE 'available' END,"+
			" "+d.Now(0)+" - (x % 100) * 1000000, 0, 20, 0, "+d.Now(0)+", 'k' || (x % ?) FROM g",
			q.keys*q.each*5/4, q.name, q.keys, q.keys); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	c, err := catalog.New(d, core.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	sts, err := c.Statements(f, m) // m lanes: the template's second count (Kinds)
	if err != nil {
		t.Fatal(err)
	}
	query := ""
	for _, st := range sts {
		if st.Name == "lanes.candidates" && st.Size == f && st.Kinds == m {
			query = st.SQL
		}
	}
	if query == "" {
		t.Fatalf("no lanes.candidates of %d lanes at size %d in the catalog", m, f)
	}
	for _, queue := range []string{"many", "few"} {
		var args []any
		for k := range m {
			args = append(args, queue, fmt.Sprint("k", k))
		}
		rows, err := db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		text := strings.Join(plan, "\n")
		t.Logf("queue %s:\n%s", queue, text)
		search := "SEARCH " + names.Items + " USING INDEX " + prefix + "items_flow (queue=? AND flow_key=?"
		if got := strings.Count(text, search); got != m {
			t.Errorf("queue %s: %d searches %q, want one a lane, %d:\n%s", queue, got, search, m, text)
		}
		for _, bad := range []string{"SCAN " + names.Items, "TEMP B-TREE"} {
			if strings.Contains(text, bad) {
				t.Errorf("queue %s: the plan has %q:\n%s", queue, bad, text)
			}
		}
	}
}
