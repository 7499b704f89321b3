package postgres_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/catalog"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/postgres"
)

// prefixedQuerier runs every statement with a prefix (EXPLAIN), so that
// the statement the dialect builds is the one the server plans.
type prefixedQuerier struct {
	q      dialect.Querier
	prefix string
}

func (p prefixedQuerier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return p.q.ExecContext(ctx, p.prefix+query, args...)
}

func (p prefixedQuerier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return p.q.QueryContext(ctx, p.prefix+query, args...)
}

func (p prefixedQuerier) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return p.q.QueryRowContext(ctx, p.prefix+query, args...)
}

// claimSpec is the ClaimSpec core.Store.Claim builds (core/claim.go), with
// the store's placeholders written out for tables under prefix.
func claimSpec(d dialect.Dialect, prefix, queue string, owner, token uuid.UUID, limit int) dialect.ClaimSpec {
	names := migrations.NamesFor(prefix)
	r := strings.NewReplacer("{items}", names.Items, "{processes}", names.Processes, "{now+}", d.AddMicros(d.Now(0)), "{now}", d.Now(0))
	return dialect.ClaimSpec{
		Table:      names.Items,
		Key:        "id",
		Filter:     r.Replace("queue = ? AND state = 'available' AND flow_key IS NULL AND available_at <= {now} AND EXISTS (SELECT 1 FROM {processes} p WHERE p.id = ?)"),
		FilterArgs: []any{queue, d.UUID(owner)},
		OrderBy:    "priority, available_at, id",
		Limit:      limit,
		Set:        r.Replace("state = 'claimed', claim_token = ?, claimed_by = ?, claimed_at = {now}, lease_expires_at = {now+}, attempt = attempt + 1"),
		SetArgs:    []any{d.UUID(token), d.UUID(owner), time.Minute.Microseconds()},
		Returning:  []string{"id", "queue", "state"},
	}
}

// explainTables creates Plenum's tables under a random prefix, dropped
// when the test ends, and returns the database and the prefix.
func explainTables(t *testing.T) (*sql.DB, string) {
	t.Helper()
	db := conformance.Opener(postgres.DriverName, harness.DSN(t))(t)
	d := postgres.Dialect()
	prefix := fmt.Sprintf("px%08x_", rand.Uint32())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := migrations.Drop(ctx, db, d, prefix); err != nil {
			t.Error(err)
		}
	})
	if _, err := migrations.Apply(t.Context(), db, d, prefix); err != nil {
		t.Fatal(err)
	}
	return db, prefix
}

// bitmapScansOffKey returns the lines of plan that build a bitmap from an
// index other than a primary key: an unordered read of an index the
// statement should read in order. The claim's update finds its rows by
// their ids, bound as an array (id = ANY(ARRAY(...))), which PostgreSQL
// may read as a bitmap of the primary key, in the order of the pages.
func bitmapScansOffKey(plan string) []string {
	var off []string
	for _, line := range strings.Split(plan, "\n") {
		line = strings.TrimSpace(line)
		if _, name, ok := strings.Cut(line, "Bitmap Index Scan on "); ok && !strings.HasSuffix(strings.Fields(name)[0], "_pkey") {
			off = append(off, line)
		}
	}
	return off
}

func planText(t *testing.T, rows *sql.Rows) string {
	t.Helper()
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// TestClaimPlan_UsesPartialIndex fills an items table with 20,000 rows of
// which 5% are available, analyzes it, and has the server plan the exact
// claim statement the dialect builds for the core's claim: it must read
// the partial claim index (queue, priority, available_at, id WHERE state =
// 'available' AND flow_key IS NULL) in order and stop after the limit, with no sort and no scan
// of the table.
func TestClaimPlan_UsesPartialIndex(t *testing.T) {
	db, prefix := explainTables(t)
	ctx := t.Context()
	d := postgres.Dialect()
	names := migrations.NamesFor(prefix)
	const rows, queues = 20000, 10
	if _, err := db.ExecContext(ctx, `INSERT INTO `+names.Items+` (id, queue, kind, priority, state, available_at, attempt, max_attempts, crash_count, created_at)
		SELECT gen_random_uuid(), 'q' || (g % $2), 'k', g % 5,
			CASE WHEN (g / $2) % 20 = 0 THEN 'available' ELSE 'completed' END,
			clock_timestamp() - (g % 100) * INTERVAL '1 minute', 0, 20, 0, clock_timestamp()
		FROM generate_series(1, $1::int) AS g`, rows, queues); err != nil {
		t.Fatal(err)
	}
	owner := uuid.Must(uuid.NewV7())
	if _, err := db.ExecContext(ctx, `INSERT INTO `+names.Processes+` (id, host, pid, started_at, last_heartbeat_at, heartbeats) VALUES ($1, 'explain', 1, clock_timestamp(), clock_timestamp(), 0)`, owner.String()); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ANALYZE "+names.Items); err != nil {
		t.Fatal(err)
	}

	spec := claimSpec(d, prefix, "q3", owner, uuid.Must(uuid.NewV7()), 10)
	planRows, err := d.Claim(ctx, prefixedQuerier{q: db, prefix: "EXPLAIN "}, spec)
	if err != nil {
		t.Fatal(err)
	}
	plan := planText(t, planRows)
	t.Logf("EXPLAIN of the claim of 10 items of one queue (%d rows, %d available):\n%s", rows, rows/20, plan)
	index := names.Items[:len(names.Items)-len("items")] + "items_claim"
	if !strings.Contains(plan, "Index Scan using "+index+" on "+names.Items) {
		t.Errorf("the claim's plan does not scan the partial index %s:\n%s", index, plan)
	}
	for _, bad := range []string{"Seq Scan on " + names.Items, "Sort"} {
		if strings.Contains(plan, bad) {
			t.Errorf("the claim's plan has %q:\n%s", bad, plan)
		}
	}
	if off := bitmapScansOffKey(plan); len(off) > 0 {
		t.Errorf("the claim's plan reads a bitmap of an index other than a primary key (%q):\n%s", off, plan)
	}

	// The same statement run for real, in a transaction rolled back: the
	// index scan stops at the limit.
	tx, err := d.Begin(ctx, db, dialect.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	planRows, err = d.Claim(ctx, prefixedQuerier{q: tx, prefix: "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) "}, spec)
	if err != nil {
		t.Fatal(err)
	}
	analyzed := planText(t, planRows)
	t.Logf("EXPLAIN ANALYZE of the same claim, rolled back:\n%s", analyzed)
	scanned := false
	for _, line := range strings.Split(analyzed, "\n") {
		if strings.Contains(line, "Index Scan using "+index) {
			scanned = strings.Contains(line, "(actual rows=10 loops=1)")
		}
	}
	if !scanned {
		t.Errorf("EXPLAIN ANALYZE: want one index scan on %s that stops after 10 rows:\n%s", index, analyzed)
	}
}

// TestUnfiredBarriersPlan_UsesPartialIndex has the server plan the query
// core.Store.UnfiredBarriers runs (core/barrier.go) on 20,000 barriers of
// which 1% have not fired: it must read the partial index of unfired
// barriers (created_at, id WHERE fired_at IS NULL) in order, with no sort
// and no scan of the table.
func TestUnfiredBarriersPlan_UsesPartialIndex(t *testing.T) {
	db, prefix := explainTables(t)
	ctx := t.Context()
	d := postgres.Dialect()
	names := migrations.NamesFor(prefix)
	const rows = 20000
	if _, err := db.ExecContext(ctx, `INSERT INTO `+names.Barriers+` (id, owner_id, name, expected, arrived, failed, sealed, fired_at,
			join_queue, join_kind, join_priority, join_max_attempts, on_child_failure, created_at)
		SELECT gen_random_uuid(), gen_random_uuid(), 'b', 10, 10, 0, true,
			CASE WHEN g % 100 = 0 THEN NULL ELSE clock_timestamp() END,
			'join', '', 0, 20, 'proceed', clock_timestamp() - (g % 1000) * INTERVAL '1 minute'
		FROM generate_series(1, $1::int) AS g`, rows); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ANALYZE "+names.Barriers); err != nil {
		t.Fatal(err)
	}
	// Every column, as the store reads them.
	query := "SELECT * FROM " + names.Barriers + " WHERE fired_at IS NULL AND created_at <= " + d.AddMicros(d.Now(0)) +
		" ORDER BY created_at, id" + d.Limit(100)
	planRows, err := db.QueryContext(ctx, "EXPLAIN "+d.Rebind(query), -time.Hour.Microseconds())
	if err != nil {
		t.Fatal(err)
	}
	plan := planText(t, planRows)
	t.Logf("EXPLAIN of the unfired barriers, oldest first (%d barriers, %d unfired):\n%s", rows, rows/100, plan)
	index := prefix + "barriers_unfired"
	if !strings.Contains(plan, "Index Scan using "+index+" on "+names.Barriers) && !strings.Contains(plan, "Index Only Scan using "+index+" on "+names.Barriers) {
		t.Errorf("the plan does not scan the partial index %s:\n%s", index, plan)
	}
	for _, bad := range []string{"Seq Scan on " + names.Barriers, "Sort", "Bitmap Heap Scan on " + names.Barriers} {
		if strings.Contains(plan, bad) {
			t.Errorf("the plan has %q:\n%s", bad, plan)
		}
	}
}

// The retention the worker runtime will run, a bounded delete of finished
// items older than an age, reads the partial index of finished items
// (version 2) in finish order and stops at the batch size: 20,000 items, of
// which 90% finished over the last 1,000 minutes.
func TestRetentionPlan_UsesFinishedIndex(t *testing.T) {
	db, prefix := explainTables(t)
	ctx := t.Context()
	names := migrations.NamesFor(prefix)
	const rows = 20000
	if _, err := db.ExecContext(ctx, `INSERT INTO `+names.Items+` (id, queue, kind, priority, state, available_at, attempt, max_attempts, crash_count, created_at, finished_at)
		SELECT gen_random_uuid(), 'q', 'k', 0,
			CASE WHEN g % 10 = 0 THEN 'available' WHEN g % 10 = 1 THEN 'dead' ELSE 'completed' END,
			clock_timestamp(), 1, 20, 0, clock_timestamp(),
			CASE WHEN g % 10 = 0 THEN NULL ELSE clock_timestamp() - (g % 1000) * INTERVAL '1 minute' END
		FROM generate_series(1, $1::int) AS g`, rows); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ANALYZE "+names.Items); err != nil {
		t.Fatal(err)
	}
	// The statement the core sends (dialect.Purger): the batch's ids read
	// through the index and bound as one array, so that the delete itself
	// goes by primary key (with IN (SELECT ...) the planner may hash-join
	// them against a scan of the whole table).
	cond := "finished_at < statement_timestamp() - ? * INTERVAL '1 microsecond' AND state IN ('completed', 'dead', 'cancelled')"
	q, args := postgres.Dialect().(dialect.Purger).PurgeSQL(dialect.PurgeSpec{
		Table: names.Items, Key: "id", Cond: cond, CondArgs: []any{(10 * time.Hour).Microseconds()},
		OrderBy: "finished_at", Limit: 500, Dependents: []dialect.PurgeDependent{{Table: names.Attempts, Key: "item_id"}, {Table: names.ItemMeta, Key: "item_id"}},
	})
	planRows, err := db.QueryContext(ctx, "EXPLAIN "+postgres.Dialect().Rebind(q), args...)
	if err != nil {
		t.Fatal(err)
	}
	plan := planText(t, planRows)
	t.Logf("EXPLAIN of a retention batch of 500 (%d items, 90%% finished):\n%s", rows, plan)
	index := prefix + "items_finished"
	if !strings.Contains(plan, "Index Scan using "+index+" on "+names.Items) || !strings.Contains(plan, "on "+prefix+"items_pkey") || !strings.Contains(plan, "on "+prefix+"attempts_pkey") {
		t.Errorf("the retention plan does not read %s, then the primary keys of the items and their history:\n%s", index, plan)
	}
	if strings.Contains(plan, "Seq Scan on "+names.Items) || strings.Contains(plan, "Sort") {
		t.Errorf("the retention plan scans or sorts the items table:\n%s", plan)
	}
}

// Retention's read of idle lanes goes through the index of idle lanes
// (version 11), and checks each lane's available and claimed items
// through the flow indexes, never scanning the lanes or the items:
// 20,000 lanes of which a tenth idle, and 200,000 items over their keys.
func TestRetentionPlan_IdleLanesUseTheirIndex(t *testing.T) {
	db, prefix := explainTables(t)
	ctx := t.Context()
	names := migrations.NamesFor(prefix)
	const lanes = 20000
	if _, err := db.ExecContext(ctx, `INSERT INTO `+names.Lanes+` (id, queue, lane_key, next_at, updated_at)
		SELECT gen_random_uuid(), 'q', 'k' || g, CASE WHEN g % 10 = 0 THEN NULL ELSE clock_timestamp() END, clock_timestamp() - (g % 1000) * INTERVAL '1 minute'
		FROM generate_series(1, $1::int) AS g`, lanes); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO `+names.Items+` (id, queue, kind, priority, state, available_at, attempt, max_attempts, crash_count, created_at, finished_at, flow_key)
		SELECT gen_random_uuid(), 'q', 'k', 0, CASE WHEN g % 3 = 0 THEN 'completed' ELSE 'available' END, clock_timestamp(), 1, 20, 0, clock_timestamp(),
			CASE WHEN g % 3 = 0 THEN clock_timestamp() END, 'k' || (g % $2::int)
		FROM generate_series(1, $1::int) AS g`, 10*lanes, lanes); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{names.Lanes, names.Items} {
		if _, err := db.ExecContext(ctx, "ANALYZE "+table); err != nil {
			t.Fatal(err)
		}
	}
	c, err := catalog.New(postgres.Dialect(), core.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	all, err := c.Statements(500)
	if err != nil {
		t.Fatal(err)
	}
	var read string
	for _, st := range all {
		if st.Name == "purge.lanes.select" {
			read = st.SQL
		}
	}
	if read == "" {
		t.Fatal("the catalog has no purge.lanes.select of 500")
	}
	planRows, err := db.QueryContext(ctx, "EXPLAIN "+read, -(10 * time.Hour).Microseconds())
	if err != nil {
		t.Fatal(err)
	}
	plan := planText(t, planRows)
	t.Logf("EXPLAIN of retention's read of 500 idle lanes (%d lanes, a tenth idle):\n%s", lanes, plan)
	if !strings.Contains(plan, prefix+"lanes_idle") {
		t.Errorf("retention's read of idle lanes does not use %slanes_idle:\n%s", prefix, plan)
	}
	if strings.Contains(plan, "Seq Scan") {
		t.Errorf("retention's read of idle lanes scans a table:\n%s", plan)
	}
}
