package postgres_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/migrations"
)

// TestKeyScanPlan_FlatInKeys has the server run the claim of keys' read
// of the next 50 keys with due work ("lanes.keys"), in the queues of
// TestLaneCandidatesPlan_FlatInKeys (10,000 keys of 4 items, 10 keys of
// 4,000): in both, each key is one probe of items_flow that reads one
// entry, and each key's lane is one probe of the lanes' unique key, with
// no sort, no join and no scan of a table, so that the read costs the
// keys it returns whatever the keys, lanes or items of the queue.
func TestKeyScanPlan_FlatInKeys(t *testing.T) {
	db, prefix := laneTables(t)
	ctx := t.Context()
	names := migrations.NamesFor(prefix)
	owner := uuid.New()
	if _, err := db.ExecContext(ctx, "INSERT INTO "+names.Processes+" (id, host, pid, started_at, last_heartbeat_at, heartbeats) VALUES ($1, 'h', 1, now(), now(), 0)", owner); err != nil {
		t.Fatal(err)
	}
	query := laneCatalogSQL(t, prefix, "lanes.keys", 0, 0)
	index := prefix + "items_flow"
	for _, q := range []struct {
		name string
		keys int
	}{{"many", 50}, {"few", 10}} {
		plan := explainRolledBack(t, db, query, []any{q.name, "", q.name, 50, q.name, owner})
		t.Logf("the read of the next 50 keys of queue %s:\n%s", q.name, plan)
		probes := 0
		for _, line := range strings.Split(plan, "\n") {
			if !strings.Contains(line, "Scan using "+index+" on ") {
				continue
			}
			got := actualRows.FindStringSubmatch(line)
			if got == nil {
				t.Fatalf("no actual rows on %q", line)
			}
			n, _ := strconv.Atoi(got[1])
			loops, _ := strconv.Atoi(got[2])
			if n > 1 {
				t.Errorf("queue %s: a probe read %d rows: %s", q.name, n, line)
			}
			probes += loops
		}
		// One probe a key found, one more that finds none where the
		// queue has fewer keys than asked for.
		if probes < q.keys || probes > q.keys+1 {
			t.Errorf("queue %s: %d probes of %s, want %d:\n%s", q.name, probes, index, q.keys, plan)
		}
		if lookups := strings.Count(plan, "Index Scan using "+prefix+"lanes_key"); lookups != 1 || !strings.Contains(plan, "lanes_key on "+names.Lanes+" l (actual rows=0 loops="+strconv.Itoa(q.keys)+")") {
			t.Errorf("queue %s: the keys' lanes are not read by their unique key, one probe a key:\n%s", q.name, plan)
		}
		for _, bad := range []string{"Seq Scan", "Sort", "Bitmap Heap Scan"} {
			if strings.Contains(plan, bad) {
				t.Errorf("queue %s: the plan has %q:\n%s", q.name, bad, plan)
			}
		}
	}
}
