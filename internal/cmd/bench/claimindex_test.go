package bench

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/internal/cmd/cmdline"
	"github.com/plenumdb/plenum/sqlite"
)

// explainClaim returns the database's plan of b's claim statement with
// its arguments bound, for the databases whose claim the bench reads
// through a partial index.
func explainClaim(t *testing.T, b *baseline, queue string) string {
	t.Helper()
	ctx := t.Context()
	token, worker := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	var q string
	var args []any
	cols := 1
	switch b.d.Name() {
	case "postgres":
		q = "EXPLAIN " + pgBare{}.claimSQL(b)
		args = []any{queue, 10, token.String(), worker.String(), baseLease}
	case "sqlite":
		q, cols = "EXPLAIN QUERY PLAN "+sqliteBare{}.claimSQL(b), 4
		args = []any{b.d.UUID(token), b.d.UUID(worker), baseLease, queue, 10}
	default:
		t.Fatalf("%s: no plan to read", b.d.Name())
	}
	rows, err := b.db.QueryContext(ctx, q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	vals := make([]any, cols)
	for i := range vals {
		vals[i] = new(sql.NullString)
	}
	for rows.Next() {
		if err := rows.Scan(vals...); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, vals[cols-1].(*sql.NullString).String)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// checkClaimUsesIndex checks that the baseline's claim reads the claim
// index, whose predicate (version 8) leaves out items with a flow key: a
// claim whose condition does not imply it would read the whole table.
func checkClaimUsesIndex(t *testing.T, b *baseline) {
	t.Helper()
	ctx := t.Context()
	if n := b.d.Name(); n != "postgres" && n != "sqlite" {
		t.Skipf("%s: no partial claim index to check", n)
	}
	queue := "indexed." + randomTag()
	if err := b.enqueue(ctx, queue, 500, uuid.Nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.db.ExecContext(ctx, "ANALYZE "+b.names.Items); err != nil {
		t.Fatal(err)
	}
	plan := explainClaim(t, b, queue)
	if !strings.Contains(plan, b.names.Items+"_claim") {
		t.Fatalf("the baseline's claim does not read the claim index; plan:\n%s", plan)
	}
	t.Logf("plan:\n%s", plan)
}

// The baseline's claim reads Plenum's claim index on SQLite.
func TestBench_BaselineClaimUsesClaimIndex(t *testing.T) {
	t.Parallel()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "bare.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() }) // after the tables are dropped
	checkClaimUsesIndex(t, bareOn(t, db, sqlite.Dialect()))
}

// The same on the database the environment names (see envBenchDialect).
func TestBench_BaselineClaimUsesClaimIndexOnEnvDialect(t *testing.T) {
	t.Parallel()
	name, dsn := envBenchTarget(t)
	db, d, err := cmdline.OpenDialect(name, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	checkClaimUsesIndex(t, bareOn(t, db, d))
}
