package postgres_test

import (
	"database/sql"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/catalog"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/postgres"
)

// laneCatalogSQL is the statement name of the catalog at size f with m
// of its second count (Kinds), as the store under prefix sends it: the
// claim of f lanes ("lanes.claim", m 0), or the lanes claim's read of
// their first available items ("lanes.candidates") or claim of them
// ("claim.lanes"), one statement for any lanes and any counts (m and f
// 0: the lanes and their counts are bound as lists, dialect.KeyLister).
func laneCatalogSQL(t *testing.T, prefix, name string, m, f int) string {
	t.Helper()
	c, err := catalog.New(postgres.Dialect(), core.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	st, ok := c.Statement(name, f, m)
	if !ok {
		t.Fatalf("no %s of %d lanes at size %d in the catalog", name, m, f)
	}
	return st.SQL
}

// laneTables are new tables holding two queues of keyed items: "many",
// 10,000 keys of 4 available items, and "few", 10 keys of 4,000; of each
// key's rows one in five more is completed. Priorities and times vary,
// so that a lane's claim order is not its insertion order.
func laneTables(t *testing.T) (*sql.DB, string) {
	t.Helper()
	db, prefix := explainTables(t)
	ctx := t.Context()
	names := migrations.NamesFor(prefix)
	for _, q := range []struct {
		name       string
		keys, each int
	}{{"many", 10000, 4}, {"few", 10, 4000}} {
		if _, err := db.ExecContext(ctx, `INSERT INTO `+names.Items+` (id, queue, kind, priority, state, available_at, attempt, max_attempts, crash_count, created_at, flow_key)
			SELECT gen_random_uuid(), $1, 'k', g % 3, CASE WHEN (g / $2) % 5 = 0 THEN 'completed' ELSE 'available' END,
				clock_timestamp() - (g % 100) * INTERVAL '1 second', 0, 20, 0, clock_timestamp(), 'k' || (g % $2)
			FROM generate_series(1, $3::int) AS g`, q.name, q.keys, q.keys*q.each*5/4); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, "ANALYZE "+names.Items); err != nil {
		t.Fatal(err)
	}
	return db, prefix
}

var actualRows = regexp.MustCompile(`actual rows=(\d+) loops=(\d+)`)

// TestLaneCandidatesPlan_FlatInKeys has the server run the lanes claim's
// read of 10 lanes' first 3 items each, in a queue of 10,000 keys of 4
// items and in one of 10 keys of 4,000: in both, each lane is read along
// items_flow (queue, flow_key, priority, available_at, id WHERE state =
// 'available' AND flow_key IS NOT NULL) in order, stopping after its 3
// rows, with no sort and no scan of the table; what it reads does not
// grow with the keys of the queue or the items of a key, and the plan,
// one index scan run once a lane, not with the lanes either.
func TestLaneCandidatesPlan_FlatInKeys(t *testing.T) {
	db, prefix := laneTables(t)
	ctx := t.Context()
	names := migrations.NamesFor(prefix)
	const m, f = 10, 3
	// One statement for any number of lanes, each lane's count bound
	// (dialect.KeyLister).
	query := laneCatalogSQL(t, prefix, "lanes.candidates", 0, f)
	index := prefix + "items_flow"
	for _, queue := range []string{"many", "few"} {
		args := listedLanes(queue, m, f)
		rows, err := db.QueryContext(ctx, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) "+query, args...)
		if err != nil {
			t.Fatal(err)
		}
		plan := planText(t, rows)
		t.Logf("the read of %d lanes' first %d items in queue %s:\n%s", m, f, queue, plan)
		checkLaneScans(t, plan, queue, index+" on "+names.Items, m, f)
		if nodes := strings.Count(plan, "Scan using "+index+" on "); nodes != 1 {
			t.Errorf("queue %s: %d scan nodes of %s, want one run once a lane:\n%s", queue, nodes, index, plan)
		}
		for _, bad := range []string{"Seq Scan", "Sort", "Bitmap Heap Scan"} {
			if strings.Contains(plan, bad) {
				t.Errorf("queue %s: the plan has %q:\n%s", queue, bad, plan)
			}
		}
	}
}

// TestLaneClaimPlan_FlatInKeys has the server run, and roll back, the
// lanes claim's claim of 10 lanes' items, at most 3 of each
// ("claim.lanes"), in the queues of TestLaneCandidatesPlan_FlatInKeys:
// in both, each lane is read along items_flow in order, stopping after
// its 3 rows, and the items are then found by their primary key, with no
// scan of the table; what the claim reads does not grow with the keys of
// the queue or the items of a key. The lanes are one index scan, run once
// a lane (a LATERAL subquery over the bound lists of keys and parts), so
// that the plan's size does not grow with the lanes either: as one
// subquery a lane, 50 lanes took 7 to 15 ms to plan against under 1 ms
// for 4.
func TestLaneClaimPlan_FlatInKeys(t *testing.T) {
	db, prefix := laneTables(t)
	names := migrations.NamesFor(prefix)
	const m, f = 10, 3
	// One statement for any number of lanes: the lanes and their parts
	// are bound as two lists (dialect.KeyLister).
	query := laneCatalogSQL(t, prefix, "claim.lanes", 0, f)
	index := prefix + "items_flow"
	for _, queue := range []string{"many", "few"} {
		args := listedLanes(queue, m, f)
		// The claim's own arguments follow the filter's: token, owner,
		// lease in microseconds.
		args = append(args, uuid.New(), uuid.New(), int64(time.Minute/time.Microsecond))
		plan := explainRolledBack(t, db, query, args)
		t.Logf("the claim of %d lanes' first %d items in queue %s:\n%s", m, f, queue, plan)
		checkLaneScans(t, plan, queue, index+" on "+names.Items, m, f)
		if nodes := strings.Count(plan, "Scan using "+index+" on "); nodes != 1 {
			t.Errorf("queue %s: %d scan nodes of %s, want one run once a lane:\n%s", queue, nodes, index, plan)
		}
		if got := actualRows.FindStringSubmatch(plan[strings.Index(plan, "Update on "):]); got == nil || got[1] != strconv.Itoa(m*f) {
			t.Errorf("queue %s: the update did not claim %d rows:\n%s", queue, m*f, plan)
		}
		if strings.Contains(plan, "Seq Scan") {
			t.Errorf("queue %s: the plan has a Seq Scan:\n%s", queue, plan)
		}
		if off := bitmapScansOffKey(plan); len(off) > 0 {
			t.Errorf("queue %s: the plan reads a bitmap of an index other than a primary key (%q):\n%s", queue, off, plan)
		}
	}
}

// explainRolledBack runs query with args under EXPLAIN ANALYZE in a
// transaction rolled back, and returns its plan.
func explainRolledBack(t *testing.T, db *sql.DB, query string, args []any) string {
	t.Helper()
	tx, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(t.Context(), "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) "+query, args...)
	if err != nil {
		t.Fatal(err)
	}
	return planText(t, rows)
}

// listedLanes are the arguments of a read of the first f items of the
// lanes k0 to k(m-1) of queue through dialect.KeyLister: the keys, their
// counts, the queue.
func listedLanes(queue string, m, f int) []any {
	keys, counts := make([]string, m), make([]int, m)
	for k := range m {
		keys[k], counts[k] = fmt.Sprint("k", k), f
	}
	keyList, countList := postgres.Dialect().(dialect.KeyLister).KeyList(keys, counts)
	return []any{keyList, countList, queue}
}

// checkLaneScans checks, in plan (EXPLAIN ANALYZE's text) of the reads
// of m lanes of queue, that the lanes are m index scans (of the index
// and table named by on, index-only or not: a scan node each, or one
// node run once a lane), each reading at most f rows, m*f in all.
func checkLaneScans(t *testing.T, plan, queue, on string, m, f int) {
	t.Helper()
	scans, read := 0, 0
	for _, line := range strings.Split(plan, "\n") {
		if !strings.Contains(line, "Scan using "+on) {
			continue
		}
		got := actualRows.FindStringSubmatch(line)
		if got == nil {
			t.Fatalf("no actual rows on %q", line)
		}
		// EXPLAIN gives a node's rows a loop, rounded.
		n, _ := strconv.Atoi(got[1])
		loops, _ := strconv.Atoi(got[2])
		if n > f {
			t.Errorf("queue %s: a lane's scan read %d rows for a limit of %d: %s", queue, n, f, line)
		}
		scans += loops
		read += n * loops
	}
	if scans != m || read != m*f {
		t.Errorf("queue %s: %d scans of %s reading %d rows, want %d reading %d:\n%s", queue, scans, on, read, m, m*f, plan)
	}
}

// TestLaneTakePlan_FlatInKeys has the server run, and roll back, a
// claim of 50 lanes ("lanes.claim") in a queue of 10,000 lanes whose
// turn has come and in one of 60: in both, the lanes are read along
// lanes_next in turn order and updated through the primary key, with no
// scan of the table, so that what a claim of lanes reads does not grow
// with the keys of its queue. (With the update's rows found by a hash
// join, PostgreSQL read all 10,000 lanes at each claim.)
func TestLaneTakePlan_FlatInKeys(t *testing.T) {
	db, prefix := explainTables(t)
	ctx := t.Context()
	names := migrations.NamesFor(prefix)
	for _, q := range []struct {
		name string
		keys int
	}{{"many", 10000}, {"few", 60}} {
		if _, err := db.ExecContext(ctx, `INSERT INTO `+names.Lanes+` (id, queue, lane_key, next_at, updated_at)
			SELECT gen_random_uuid(), $1, 'k' || g, clock_timestamp() - g * INTERVAL '1 millisecond', clock_timestamp()
			FROM generate_series(1, $2::int) AS g`, q.name, q.keys); err != nil {
			t.Fatal(err)
		}
	}
	owner := uuid.New()
	if _, err := db.ExecContext(ctx, `INSERT INTO `+names.Processes+` (id, host, pid, started_at, last_heartbeat_at, heartbeats) VALUES ($1, 'explain', 1, clock_timestamp(), clock_timestamp(), 0)`, owner.String()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ANALYZE "+names.Lanes); err != nil {
		t.Fatal(err)
	}
	const m = 50
	query := laneCatalogSQL(t, prefix, "lanes.claim", 0, m)
	for _, queue := range []string{"many", "few"} {
		// The filter's arguments: queue, owner, the queue's default
		// limits (none), owner again.
		args := []any{queue, owner.String(), 0, 0, 0, owner.String(), 0}
		plan := explainRolledBack(t, db, query, args)
		t.Logf("the claim of %d lanes in queue %s:\n%s", m, queue, plan)
		if got := actualRows.FindStringSubmatch(plan[strings.Index(plan, "Update on "):]); got == nil || got[1] != strconv.Itoa(m) {
			t.Errorf("queue %s: the update did not take %d lanes:\n%s", queue, m, plan)
		}
		if !strings.Contains(plan, "Index Scan using "+prefix+"lanes_next on "+names.Lanes) {
			t.Errorf("queue %s: the lanes are not read along %slanes_next:\n%s", queue, prefix, plan)
		}
		if strings.Contains(plan, "Seq Scan") {
			t.Errorf("queue %s: the plan has a Seq Scan:\n%s", queue, plan)
		}
		if off := bitmapScansOffKey(plan); len(off) > 0 {
			t.Errorf("queue %s: the plan reads a bitmap of an index other than a primary key (%q):\n%s", queue, off, plan)
		}
	}
}
