package mysql_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/mysql"
)

// claimSpec is the ClaimSpec core.Store.Claim builds (core/claim.go), for
// prefix p, queue and owner.
func claimSpec(p, queue string, owner []byte, limit int) dialect.ClaimSpec {
	d := mysql.Dialect()
	n := migrations.NamesFor(p)
	return dialect.ClaimSpec{
		Table:      n.Items,
		Key:        "id",
		Filter:     "queue = ? AND state = 'available' AND flow_key IS NULL AND available_at <= " + d.Now(0) + " AND EXISTS (SELECT 1 FROM " + n.Processes + " p WHERE p.id = ?)",
		FilterArgs: []any{queue, owner},
		OrderBy:    "priority, available_at, id",
		Limit:      limit,
	}
}

// The claim's locking SELECT reads the claim index in claim order: the
// index is used, there is no filesort (which would make InnoDB lock every
// row it sorts), and a claim of n rows locks about n rows, on a table of
// 20,000 items of which few are claimable.
func TestExplain_ClaimUsesIndexWithoutFilesort(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	ctx := t.Context()
	d := mysql.Dialect()
	p := newPrefix(t, db)
	s, err := core.Open(ctx, db, d, core.Options{Prefix: p, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	names := migrations.NamesFor(p)

	// 20,000 items: 18,000 finished and 1,000 delayed in the claimed queue,
	// 500 available there, 500 available in another queue.
	const total, finished, delayed, other = 20000, 18000, 1000, 500
	specs := make([]core.ItemSpec, 0, total)
	for i := range total {
		sp := core.ItemSpec{Queue: "work", Priority: i % 5, Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))}
		switch {
		case i < other:
			sp.Queue = "other"
		case i < other+delayed:
			sp.Delay = time.Hour
		}
		specs = append(specs, sp)
	}
	if _, err := s.Enqueue(ctx, specs...); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "UPDATE "+names.Items+" SET state = 'completed', finished_at = UTC_TIMESTAMP(6) WHERE queue = 'work' AND state = 'available' AND available_at <= UTC_TIMESTAMP(6) ORDER BY id LIMIT ?", finished); err != nil {
		t.Fatal(err)
	}
	owner, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{Host: "explain"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ANALYZE TABLE "+names.Items+", "+names.Processes); err != nil {
		t.Fatal(err)
	}
	var version string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	mariadb := strings.Contains(strings.ToLower(version), "mariadb")

	const limit = 10
	spec := claimSpec(p, "work", d.UUID(owner).([]byte), limit)
	query := mysql.ClaimSelect(spec)
	t.Logf("server %s; claim SELECT:\n%s", version, query)

	// EXPLAIN, the tabular form.
	plan := explainRows(t, db, "EXPLAIN "+query, spec.FilterArgs...)
	t.Logf("EXPLAIN:\n%s", formatPlan(plan))
	claimIndex := p + "items_claim"
	found := false
	for _, row := range plan {
		if strings.Contains(row["Extra"], "Using filesort") || strings.Contains(row["Extra"], "Using temporary") {
			t.Errorf("the claim's plan sorts: %v", row)
		}
		if row["table"] == names.Items {
			found = true
			if row["key"] != claimIndex {
				t.Errorf("the claim reads %s through key %q, want %q", names.Items, row["key"], claimIndex)
			}
			if row["type"] == "ALL" || row["type"] == "index" {
				t.Errorf("the claim scans %s (type %s), want a range or ref on the claim index", names.Items, row["type"])
			}
		}
	}
	if !found {
		t.Errorf("no plan row for %s", names.Items)
	}

	// The JSON plan, and what running it actually read.
	var js string
	if err := db.QueryRowContext(ctx, "EXPLAIN FORMAT=JSON "+query, spec.FilterArgs...).Scan(&js); err != nil {
		t.Errorf("EXPLAIN FORMAT=JSON: %v", err)
	} else {
		t.Logf("EXPLAIN FORMAT=JSON:\n%s", js)
	}

	// Run it in a claim transaction: it reads about limit rows, and locks
	// only those.
	tx, err := d.Begin(ctx, db, dialect.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	analyze := "EXPLAIN ANALYZE " // MySQL 8.0.18+
	if mariadb {
		analyze = "ANALYZE FORMAT=JSON "
	}
	var rows *sql.Rows
	if rows, err = tx.QueryContext(ctx, analyze+query, spec.FilterArgs...); err != nil {
		t.Logf("%s: %v", strings.TrimSpace(analyze), err)
	} else {
		var out []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		rows.Close()
		t.Logf("%s(run inside a READ COMMITTED transaction):\n%s", analyze, strings.Join(out, "\n"))
		if mariadb {
			checkAnalyzedRows(t, strings.Join(out, "\n"), names.Items, limit)
		}
	}
	var locked sql.NullInt64
	err = tx.QueryRowContext(ctx, "SELECT trx_rows_locked FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = CONNECTION_ID()").Scan(&locked)
	if err != nil {
		t.Logf("rows locked: cannot read information_schema.INNODB_TRX (needs PROCESS): %v", err)
		return
	}
	t.Logf("rows locked by the claim transaction (INNODB_TRX.trx_rows_locked): %d, for a LIMIT of %d", locked.Int64, limit)
	// Each row taken is locked twice, in the claim index and in the
	// primary key; a few more would be rows passed over on the way.
	if locked.Int64 > 2*limit+4 {
		t.Errorf("the claim transaction locked %d rows for a LIMIT of %d: it locks rows it does not take", locked.Int64, limit)
	}
}

// explainRows runs an EXPLAIN and returns its rows as column -> value.
func explainRows(t *testing.T, db *sql.DB, query string, args ...any) []map[string]string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := map[string]string{"": strings.Join(cols, "\t")}
		for i, c := range cols {
			row[c] = vals[i].String
			if !vals[i].Valid {
				row[c] = "NULL"
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// formatPlan renders EXPLAIN rows as a table, columns in the server's order.
func formatPlan(plan []map[string]string) string {
	if len(plan) == 0 {
		return "(no rows)"
	}
	cols := strings.Split(plan[0][""], "\t")
	var b bytes.Buffer
	b.WriteString(strings.Join(cols, " | "))
	for _, row := range plan {
		b.WriteString("\n")
		vals := make([]string, len(cols))
		for i, c := range cols {
			vals[i] = row[c]
		}
		b.WriteString(strings.Join(vals, " | "))
	}
	return b.String()
}

// checkAnalyzedRows finds, in MariaDB's ANALYZE FORMAT=JSON, the rows
// actually read from table (r_rows), and fails when the claim read many
// more than it takes.
func checkAnalyzedRows(t *testing.T, js, table string, limit int) {
	t.Helper()
	var doc any
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Errorf("ANALYZE FORMAT=JSON is not JSON: %v", err)
		return
	}
	var walk func(v any)
	seen := false
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			if v["table_name"] == table {
				if r, ok := v["r_rows"].(float64); ok {
					seen = true
					if r > float64(2*limit) {
						t.Errorf("the claim read %v rows of %s for a LIMIT of %d", r, table, limit)
					}
				}
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
	if !seen {
		t.Errorf("ANALYZE FORMAT=JSON shows no r_rows for %s", table)
	}
}

// The query core.Store.UnfiredBarriers runs (core/barrier.go) reads the
// unfired-barriers index, (fired_at, created_at, id) here for want of a
// partial index, seeking to fired_at IS NULL and reading in creation order:
// no filesort, on 20,000 barriers of which 1% have not fired.
func TestExplain_UnfiredBarriersUseIndexWithoutFilesort(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	ctx := t.Context()
	d := mysql.Dialect()
	p := newPrefix(t, db)
	if _, err := migrations.Apply(ctx, db, d, p); err != nil {
		t.Fatal(err)
	}
	names := migrations.NamesFor(p)
	const rows = 20000
	// n from 0 to rows-1, from five tables of ten digits.
	digit := "(SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)"
	if _, err := db.ExecContext(ctx, `INSERT INTO `+names.Barriers+` (id, owner_id, name, expected, arrived, failed, sealed, fired_at,
			join_queue, join_kind, join_priority, join_max_attempts, on_child_failure, created_at)
		SELECT UNHEX(REPLACE(UUID(), '-', '')), UNHEX(REPLACE(UUID(), '-', '')), 'b', 10, 10, 0, 1,
			CASE WHEN n % 100 = 0 THEN NULL ELSE UTC_TIMESTAMP(6) END,
			'join', '', 0, 20, 'proceed', UTC_TIMESTAMP(6) - INTERVAL (n % 1000) MINUTE
		FROM (SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d AS n
			FROM `+digit+` a, `+digit+` b, `+digit+` c, `+digit+` e, `+digit+` f) g
		WHERE n < ?`, rows); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ANALYZE TABLE "+names.Barriers); err != nil {
		t.Fatal(err)
	}
	query := "SELECT * FROM " + names.Barriers + " WHERE fired_at IS NULL AND created_at <= " + d.AddMicros(d.Now(0)) +
		" ORDER BY created_at, id" + d.Limit(100)
	plan := explainRows(t, db, "EXPLAIN "+query, -time.Hour.Microseconds())
	t.Logf("EXPLAIN (%d barriers, %d unfired):\n%s", rows, rows/100, formatPlan(plan))
	index := p + "barriers_unfired"
	if len(plan) != 1 {
		t.Fatalf("%d plan rows, want 1", len(plan))
	}
	if row := plan[0]; row["key"] != index || strings.Contains(row["Extra"], "Using filesort") {
		t.Errorf("the query reads through key %q with %q; want key %s and no filesort", row["key"], row["Extra"], index)
	}
}

// The retention the worker runtime will run, a bounded delete of finished
// items older than an age in finish order, reads the index of finish times
// (version 2; (finished_at) here, for want of a partial index) as a range,
// without a filesort: 20,000 items, of which 90% finished over the last
// 1,000 minutes.
func TestExplain_RetentionUsesFinishedIndex(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	ctx := t.Context()
	d := mysql.Dialect()
	p := newPrefix(t, db)
	if _, err := migrations.Apply(ctx, db, d, p); err != nil {
		t.Fatal(err)
	}
	names := migrations.NamesFor(p)
	const rows = 20000
	digit := "(SELECT 0 AS d UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)"
	if _, err := db.ExecContext(ctx, `INSERT INTO `+names.Items+` (id, queue, kind, priority, state, available_at, attempt, max_attempts, crash_count, created_at, finished_at)
		SELECT UNHEX(REPLACE(UUID(), '-', '')), 'q', 'k', 0,
			CASE WHEN n % 10 = 0 THEN 'available' WHEN n % 10 = 1 THEN 'dead' ELSE 'completed' END,
			UTC_TIMESTAMP(6), 1, 20, 0, UTC_TIMESTAMP(6),
			CASE WHEN n % 10 = 0 THEN NULL ELSE UTC_TIMESTAMP(6) - INTERVAL (n % 1000) MINUTE END
		FROM (SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 10000 * f.d AS n
			FROM `+digit+` a, `+digit+` b, `+digit+` c, `+digit+` e, `+digit+` f) g
		WHERE n < ?`, rows); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "ANALYZE TABLE "+names.Items); err != nil {
		t.Fatal(err)
	}
	query := "DELETE FROM " + names.Items + " WHERE finished_at < " + d.AddMicros(d.Now(0)) +
		" AND state IN ('completed', 'dead', 'cancelled') ORDER BY finished_at" + d.Limit(500)
	plan := explainRows(t, db, "EXPLAIN "+query, -(10 * time.Hour).Microseconds())
	t.Logf("EXPLAIN of a retention batch of 500 (%d items, 90%% finished):\n%s", rows, formatPlan(plan))
	index := p + "items_finished"
	if len(plan) != 1 {
		t.Fatalf("%d plan rows, want 1", len(plan))
	}
	if row := plan[0]; row["key"] != index || row["type"] != "range" || strings.Contains(row["Extra"], "Using filesort") {
		t.Errorf("the delete reads key %q as %q with %q; want a range of %s and no filesort", row["key"], row["type"], row["Extra"], index)
	}
}
