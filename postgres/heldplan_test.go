package postgres_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/postgres"
)

// statementLog records the statements, with their arguments, that pgx
// sends for a *sql.DB, so that a test can have the server plan exactly
// what the store ran.
type statementLog struct {
	mu   sync.Mutex
	sent []sentStatement
}

type sentStatement struct {
	sql  string
	args []any
}

func (l *statementLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent = append(l.sent, sentStatement{sql: data.SQL, args: append([]any(nil), data.Args...)})
	return ctx
}

func (l *statementLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// last returns the last statement sent that contains every part.
func (l *statementLog) last(parts ...string) (sentStatement, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.sent) - 1; i >= 0; i-- {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l.sent[i].sql, p)
		}
		if all {
			return l.sent[i], true
		}
	}
	return sentStatement{}, false
}

// TestCompletionPlan_ReadsThePrimaryKey runs 20,000 items through a store,
// claimed and completed 100 at a time, leaving in the partial indexes of
// claimed items (items_owner, items_lease: WHERE state = 'claimed') an
// entry for every claim, as a table has between two vacuums. It then
// claims 100 more and has the server plan the completion and the lease
// extension the store sent, with the arguments it sent, both as a custom
// plan and as the generic plan a prepared statement settles on: each must
// find the rows by primary key, and none may read a partial index of
// claimed items, which would read all 20,000 entries to find 100.
func TestCompletionPlan_ReadsThePrimaryKey(t *testing.T) {
	ctx := t.Context()
	db, log, st, prefix := tracedStore(t, "ph")
	const total, batch = 20100, 100
	specs := make([]core.ItemSpec, 0, 1000)
	for n := 0; n < total; n += cap(specs) {
		specs = specs[:0]
		for range min(cap(specs), total-n) {
			specs = append(specs, core.ItemSpec{Queue: "q", Kind: "k", Payload: []byte(`{}`)})
		}
		if _, err := st.Enqueue(ctx, specs...); err != nil {
			t.Fatal(err)
		}
	}
	owner, err := st.RegisterOwner(ctx, core.RegisterOwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	claim := func() []core.Claim {
		t.Helper()
		cs, err := st.Claim(ctx, core.ClaimParams{Queue: "q", Owner: owner, Limit: batch, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != batch {
			t.Fatalf("claimed %d items, want %d", len(cs), batch)
		}
		return cs
	}
	completions := func(cs []core.Claim) []core.Completion {
		out := make([]core.Completion, len(cs))
		for i, c := range cs {
			out[i] = core.Completion{Claim: c}
		}
		return out
	}
	for range (total - batch) / batch {
		if lost, err := st.CompleteMany(ctx, completions(claim())); err != nil || len(lost) > 0 {
			t.Fatalf("complete: lost %d, %v", len(lost), err)
		}
	}
	// Statistics as an autovacuum's ANALYZE would leave them, without
	// the vacuum that would clear the dead entries.
	if _, err := db.ExecContext(ctx, "ANALYZE "+migrations.NamesFor(prefix).Items); err != nil {
		t.Fatal(err)
	}
	held := claim()
	if _, err := st.ExtendMany(ctx, held, time.Minute); err != nil {
		t.Fatal(err)
	}
	if lost, err := st.CompleteMany(ctx, completions(held)); err != nil || len(lost) > 0 {
		t.Fatalf("complete: lost %d, %v", len(lost), err)
	}

	for _, c := range []struct{ name, sets string }{
		{"completion", "SET state = 'completed'"},
		{"lease extension", "SET lease_expires_at ="},
	} {
		sent, ok := log.last("UPDATE "+prefix+"items", c.sets)
		if !ok {
			t.Fatalf("no %s was sent", c.name)
		}
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			plan := heldPlan(t, db, mode, sent)
			t.Logf("%s, %s:\n%s", c.name, mode, plan)
			if !strings.Contains(plan, prefix+"items_pkey") {
				t.Errorf("%s (%s) does not read the primary key:\n%s", c.name, mode, plan)
			}
			for _, index := range []string{"items_owner", "items_lease"} {
				if strings.Contains(plan, prefix+index) {
					t.Errorf("%s (%s) reads %s%s:\n%s", c.name, mode, prefix, index, plan)
				}
			}
		}
	}
}

// tracedStore opens a store, on tables under a new prefix that begins
// with tag, through a pgx connection whose statements log records; the
// tables are dropped when t ends.
func tracedStore(t *testing.T, tag string) (*sql.DB, *statementLog, *core.Store, string) {
	t.Helper()
	cfg, err := pgx.ParseConfig(harness.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	log := &statementLog{}
	cfg.Tracer = log
	db := stdlib.OpenDB(*cfg)
	t.Cleanup(func() { db.Close() })
	prefix := fmt.Sprintf("%s%08x_", tag, rand.Uint32())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := migrations.Drop(ctx, db, postgres.Dialect(), prefix); err != nil {
			t.Error(err)
		}
	})
	st, err := core.Open(t.Context(), db, postgres.Dialect(), core.Options{Prefix: prefix, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	return db, log, st, prefix
}

// heldPlan has the server plan sent (an UPDATE) as a prepared statement
// under plan_cache_mode mode, and run it with the arguments it was sent
// with, in a transaction that is rolled back. EXPLAIN of the statement
// itself would always plan it for its arguments: only EXPLAIN EXECUTE
// shows the generic plan a prepared statement settles on.
func heldPlan(t *testing.T, db *sql.DB, mode string, sent sentStatement) string {
	t.Helper()
	ctx := t.Context()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	// EXECUTE takes no protocol parameters: its arguments are literals.
	// The dialect's options to pgx (result formats) are not arguments.
	var marks []string
	for _, arg := range sent.args {
		switch arg.(type) {
		case pgx.QueryResultFormats, pgx.QueryResultFormatsByOID, pgx.QueryExecMode:
			continue
		}
		marks = append(marks, "")
		i := len(marks) - 1
		switch v := arg.(type) {
		case nil:
			marks[i] = "NULL"
		case string:
			marks[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
		case []byte:
			marks[i] = "'" + strings.ReplaceAll(string(v), "'", "''") + "'"
		case int, int32, int64:
			marks[i] = fmt.Sprint(v)
		default:
			t.Fatalf("argument %d of %s: no literal for %T", i+1, sent.sql, arg)
		}
	}
	// A prepared statement outlives the transaction: each plan its own.
	name := fmt.Sprintf("held_plan_%08x", rand.Uint32())
	defer tx.ExecContext(ctx, "DEALLOCATE "+name)
	for _, stmt := range []string{"SET LOCAL plan_cache_mode = " + mode, "PREPARE " + name + " AS " + sent.sql} {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	rows, err := tx.QueryContext(ctx, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE "+name+"("+strings.Join(marks, ", ")+")")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, line := range strings.Split(planText(t, rows), "\n") {
		// The conditions quote the 100 ids.
		if len(line) > 120 {
			line = line[:120] + "..."
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}
