package sqlite_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/sqlite"
)

// The claim of keys' read of the next keys with due work ("lanes.keys"),
// planned by SQLite: the first key and each next one a search of
// items_flow on the queue and a range of flow_key, whose order is the
// read's, so that the LIMIT 1 of each probe stops at its first entry;
// each key's lane a search of the lanes' unique key; no scan of a table
// and no sort. So the read costs the keys it returns, whatever the keys
// or items of the queue.
func TestKeyScanPlan_SearchesItemsFlow(t *testing.T) {
	t.Parallel()
	db, _ := openDB(t)
	ctx := t.Context()
	d := sqlite.Dialect()
	const prefix = migrations.DefaultPrefix
	if _, err := migrations.Apply(ctx, db, d, prefix); err != nil {
		t.Fatal(err)
	}
	names := migrations.NamesFor(prefix)
	if _, err := db.ExecContext(ctx, "WITH RECURSIVE g(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM g WHERE x + 1 < 10000)"+
		" INSERT INTO "+names.Items+" (id, queue, kind, priority, state, available_at, attempt, max_attempts, crash_count, created_at, flow_key)"+
		" SELECT randomblob(16), 'q', 'k', x % 3, CASE WHEN x % 5 = 0 THEN 'completed' ELSE 'available' END,"+
		" "+d.Now(0)+" - (x % 100) * 1000000, 0, 20, 0, "+d.Now(0)+", 'k' || (x % 2000) FROM g"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	query := laneCatalogSQL(t, d, prefix, "lanes.keys", 0, 0)
	text := queryPlan(t, db, query, "q", "", "q", 50, "q", []byte("owner"))
	t.Logf("the read of the next 50 keys:\n%s", text)
	probe := regexp.MustCompile(`(?m)SEARCH i USING (COVERING )?INDEX ` + prefix + `items_flow \(queue=\? AND flow_key>\?\)`)
	if got := len(probe.FindAllString(text, -1)); got != 2 {
		t.Errorf("%d probes %q, want two (the first key, each next one):\n%s", got, probe, text)
	}
	lane := regexp.MustCompile(`(?m)SEARCH l USING (COVERING )?INDEX ` + prefix + `lanes_key \(queue=\? AND lane_key=\?\)`)
	if !lane.MatchString(text) {
		t.Errorf("the keys' lanes are not searched by their unique key:\n%s", text)
	}
	for _, bad := range []string{"SCAN " + names.Items, "SCAN i", "SCAN l", "TEMP B-TREE"} {
		if strings.Contains(text, bad) {
			t.Errorf("the plan has %q:\n%s", bad, text)
		}
	}
}
