package sqlite_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
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
	lanePlans(t, "lanes.candidates", func(queue, key string, _ int) []any { return []any{queue, key} }, nil)
}

// TestLaneClaimPlan_SearchesItemsFlow is TestLaneCandidatesPlan_SearchesItemsFlow
// for the lanes claim's claim of the 10 lanes' items, at most 3 of each
// ("claim.lanes"): each lane a search of items_flow in claim order, the
// items then found by their key, no scan of the table and no sort but
// of the ids the lanes gave.
func TestLaneClaimPlan_SearchesItemsFlow(t *testing.T) {
	t.Parallel()
	// The claim's own arguments come first: token, owner, lease.
	lanePlans(t, "claim.lanes", func(queue, key string, f int) []any { return []any{queue, key, f} }, []any{[]byte("token"), []byte("owner"), int64(60e6)})
}

// lanePlans has SQLite plan the statement name of 10 lanes of at most 3
// items each, in the two queues, the arguments of each lane from
// laneArgs, after first, and checks that each lane is a search of
// items_flow.
func lanePlans(t *testing.T, name string, laneArgs func(queue, key string, f int) []any, first []any) {
	t.Helper()
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
	query := laneCatalogSQL(t, d, prefix, name, m, f)
	for _, queue := range []string{"many", "few"} {
		args := slices.Clone(first)
		for k := range m {
			args = append(args, laneArgs(queue, fmt.Sprint("k", k), f)...)
		}
		text := queryPlan(t, db, query, args...)
		t.Logf("queue %s:\n%s", queue, text)
		// A search of items_flow, covering (the lane's ids alone) or not.
		search := regexp.MustCompile(`(?m)^SEARCH ` + names.Items + ` USING (COVERING )?INDEX ` + prefix + `items_flow \(queue=\? AND flow_key=\?`)
		if got := len(search.FindAllString(text, -1)); got != m {
			t.Errorf("queue %s: %d searches %q, want one a lane, %d:\n%s", queue, got, search, m, text)
		}
		bad := []string{"SCAN " + names.Items, "TEMP B-TREE"}
		if name == "claim.lanes" {
			// The claim orders the ids the lanes gave, a few.
			bad = bad[:1]
		}
		for _, bad := range bad {
			if strings.Contains(text, bad) {
				t.Errorf("queue %s: the plan has %q:\n%s", queue, bad, text)
			}
		}
	}
}

// laneCatalogSQL is the statement name of the catalog at size f with m
// lanes (the template's second count, Kinds), as a store of d under
// prefix sends it (a statement of no size, as "claim.lanes", for any f).
func laneCatalogSQL(t *testing.T, d dialect.Dialect, prefix, name string, m, f int) string {
	t.Helper()
	c, err := catalog.New(d, core.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	st, ok := c.Statement(name, f, m)
	if !ok {
		t.Fatalf("no %s of %d lanes at size %d in the catalog", name, m, f)
	}
	return st.SQL
}
