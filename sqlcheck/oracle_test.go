package sqlcheck

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/oracle"
)

// checkOracle fails t for every syntax error or trap in stmt, a statement
// as the dialect sends it: SQL without its ';', PL/SQL blocks with END;.
func checkOracle(t *testing.T, what, stmt string) {
	t.Helper()
	text := strings.TrimSpace(stmt)
	if !strings.HasSuffix(text, ";") {
		text += ";"
	}
	if errs := OracleSyntax(text); len(errs) > 0 {
		t.Errorf("%s: the PL/SQL grammar refuses it: %v\n%s", what, errs, stmt)
	}
	if traps := OracleTraps(stmt); len(traps) > 0 {
		t.Errorf("%s: %v\n%s", what, traps, stmt)
	}
}

// The DDL the dialect renders (the blocks, and the statement inside each)
// and the data steps of every version, up and down, as the migrator runs
// them; TestGeneratedMigrations_ParseWithTheServersGrammar checks the
// checked-in files of migrations/oracle.
func TestOracle_DDL(t *testing.T) {
	t.Parallel()
	d := oracle.Dialect()
	var stmts []string
	stmts = append(stmts, d.CreateTable(migrations.MigrationsTable(migrations.DefaultPrefix))...)
	for _, m := range migrations.All(migrations.DefaultPrefix) {
		up, down := migrations.Statements(d, m)
		stmts = append(stmts, up...)
		stmts = append(stmts, down...)
	}
	stmts = append(stmts, d.DropTable(migrations.NamesFor(migrations.DefaultPrefix).Migrations)...)
	blocks := 0
	for i, s := range stmts {
		checkOracle(t, "DDL block", s)
		inner := OracleInnerDDL(s)
		switch {
		case strings.HasPrefix(s, "BEGIN") && len(inner) != 1:
			t.Fatalf("statement %d runs %d DDL statements:\n%s", i, len(inner), s)
		case !strings.HasPrefix(s, "BEGIN") && len(inner) != 0:
			t.Fatalf("statement %d is no block but runs DDL:\n%s", i, s)
		case len(inner) == 1:
			blocks++
			checkOracle(t, "DDL", inner[0])
		}
	}
	// Every DDL statement is a block, and only a version's data steps
	// are not.
	if data := len(stmts) - blocks; data != 3 {
		t.Errorf("%d statements are not DDL blocks, want 3: version 2's backfill and its down, version 9's down", data)
	}
}

// claimSpec is a claim as the core asks for it, with the schema's claim
// index as Seek.
func claimSpec(limit int) dialect.ClaimSpec {
	var seek *dialect.Index
	for _, m := range migrations.All(migrations.DefaultPrefix) {
		for _, c := range m.Changes {
			if c.Index != nil && c.Index.Claim {
				seek = c.Index
			}
		}
	}
	d := oracle.Dialect()
	now := d.Now(0)
	return dialect.ClaimSpec{
		Table:      "plenum_items",
		Key:        "id",
		Filter:     "queue = ? AND state = 'available' AND available_at <= " + now + " AND EXISTS (SELECT 1 FROM plenum_processes p WHERE p.id = ?)",
		FilterArgs: []any{"q", d.UUID([16]byte{1})},
		OrderBy:    "priority, available_at, id",
		Limit:      limit,
		Set:        "state = 'claimed', claim_token = ?, claimed_by = ?, claimed_at = " + now + ", lease_expires_at = " + d.AddMicros(now) + ", attempt = attempt + 1",
		SetArgs:    []any{d.UUID([16]byte{2}), d.UUID([16]byte{1}), int64(30e6)},
		Returning:  []string{"id", "queue", "state"},
		Seek:       seek,
	}
}

// The claim block and the reads that follow it, at sizes 1, 2 and the
// largest claim (1,000), recorded from the dialect's own Claim.
func TestOracle_Claim(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, 2, oracle.MaxInList} {
		db, rec := openRecorder(n)
		conn, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		rows, err := oracle.Dialect().Claim(context.Background(), conn, claimSpec(n))
		if err != nil {
			t.Fatalf("claim %d: %v", n, err)
		}
		rows.Close()
		conn.Close()
		db.Close()
		stmts := rec.Statements()
		if len(stmts) != 2 || !strings.HasPrefix(stmts[0], "DECLARE") || strings.Count(stmts[1], ":") != n {
			t.Fatalf("claim %d recorded %q", n, stmts)
		}
		for _, s := range stmts {
			checkOracle(t, "claim", s)
		}
	}
	// Nothing claimed: the empty read.
	db, rec := openRecorder(0)
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := oracle.Dialect().Claim(context.Background(), conn, claimSpec(3))
	if err != nil {
		t.Fatal(err)
	}
	rows.Close()
	for _, s := range rec.Statements() {
		checkOracle(t, "empty claim", s)
	}
}

// Begin, the migration lock and the migrator's probes, recorded.
func TestOracle_BeginLockProbes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := oracle.Dialect()
	db, rec := openRecorder(0)
	defer db.Close()
	tx, err := d.Begin(ctx, db, dialect.TxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tx.Rollback()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	unlock, err := d.Lock(ctx, conn, "plenum_migrate")
	if err != nil {
		t.Fatal(err)
	}
	if err := unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := d.(dialect.TableProber).TableExists(ctx, conn, "plenum_items"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.(dialect.IndexProber).IndexExists(ctx, conn, "plenum_items", "plenum_items_key"); err != nil {
		t.Fatal(err)
	}
	stmts := rec.Statements()
	if len(stmts) < 5 {
		t.Fatalf("recorded %q", stmts)
	}
	for _, s := range stmts {
		checkOracle(t, "statement", s)
	}
}

// The migrator's own statements on Oracle, recorded: its lock, the reads
// of the applied versions, the probes, the started mark and the version
// rows, with every version's DDL and data steps, up from an empty schema,
// then down from a full one, and Status.
func TestOracle_MigratorStatements(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := oracle.Dialect()
	var all []string
	for _, fresh := range []bool{true, false} {
		db, rec := openRecorder(0)
		rec.fresh = fresh
		var err error
		if fresh {
			_, err = migrations.Up(ctx, db, d, migrations.DefaultPrefix, migrations.LatestVersion)
			// The recorder answers every claim with the same key, none
			// of the skip-locked probe's two rows: the probe fails, once
			// its statements are sent and recorded.
			if err != nil && strings.Contains(err.Error(), "skip-locked probe") {
				err = nil
			}
		} else {
			_, err = migrations.Down(ctx, db, d, migrations.DefaultPrefix, 0)
		}
		if err != nil {
			t.Fatalf("fresh %v: %v", fresh, err)
		}
		if _, err := migrations.Status(ctx, db, d, migrations.DefaultPrefix); err != nil {
			t.Fatalf("status: %v", err)
		}
		db.Close()
		all = append(all, rec.Statements()...)
	}
	if !slices.ContainsFunc(all, func(s string) bool { return strings.Contains(s, "'plenum.probe'") }) {
		t.Error("the skip-locked probe's rows were never written: its statements were not checked")
	}
	joined := strings.Join(all, "\n")
	for _, want := range []string{"DBMS_LOCK", "user_tab_columns", "user_indexes", "ADD (name", "DROP COLUMN name", "INSERT INTO plenum_attempts", "DELETE FROM plenum_attempts"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the migrator sent nothing with %q:\n%s", want, joined)
		}
	}
	for _, s := range all {
		checkOracle(t, "migrator", s)
		for _, inner := range OracleInnerDDL(s) {
			checkOracle(t, "migrator DDL", inner)
		}
	}
	t.Logf("%d distinct statements of the migrator checked", len(all))
}

// InsertIgnore's MERGE, at sizes 1, 2 and a full batch (the 1,000 of the
// IN-list limit that bounds the core's batches), with a row shaped as the
// core's: binds, a literal, the clock, a bound interval and TO_CLOB.
func TestOracle_InsertIgnore(t *testing.T) {
	t.Parallel()
	d := oracle.Dialect()
	cols := []string{"id", "queue", "kind", "unique_key", "payload", "priority", "state", "available_at", "created_at"}
	row := "?, ?, ?, ?, " + d.Param(dialect.JSON) + ", ?, 'available', " + d.AddMicros(d.Now(0)) + ", " + d.Now(0)
	for _, n := range []int{1, 2, 200} {
		checkOracle(t, "merge", d.InsertIgnore("plenum_items", cols, row, n, []string{"queue", "unique_key"}))
	}
}

// Each check bites: statements with the traps are refused.
func TestOracle_PlantedStatementsAreRefused(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ what, stmt string }{
		{"FOR UPDATE with FETCH FIRST", "SELECT id FROM t WHERE state = 'available' ORDER BY id FETCH FIRST 10 ROWS ONLY FOR UPDATE SKIP LOCKED"},
		{"FOR UPDATE under a ROWNUM filter", "SELECT id FROM t WHERE id IN (SELECT id FROM t WHERE ROWNUM <= 10) FOR UPDATE SKIP LOCKED"},
		{"misspelt SKIP LOCKED", "SELECT id FROM t FOR UPDATE SKIP LOKED"},
		{"IN list of 1,001", "SELECT id FROM t WHERE id IN (" + strings.TrimSuffix(strings.Repeat("1, ", 1001), ", ") + ")"},
		{"a 129-byte identifier", "SELECT " + strings.Repeat("a", 129) + " FROM t"},
		{"LIMIT is not Oracle", "SELECT id FROM t ORDER BY id LIMIT 10"},
		{"a reserved word as a column", "CREATE TABLE t (id RAW(16), level NUMBER(10))"},
		{"a reserved word as an added column", "ALTER TABLE t ADD (level NUMBER(10))"},
		{"ADD COLUMN is not Oracle", "ALTER TABLE t ADD COLUMN name VARCHAR2(255 CHAR)"},
		{"a misspelt DROP INDEX", "DROP INDX t_i"},
		{"IF NOT EXISTS before 23ai... and a missing parenthesis", "CREATE TABLE t (id RAW(16)"},
		{"a bare bind for a CLOB in an INSERT ... SELECT list", "INSERT INTO plenum_attempts (item_id, n, outcome, error, ended_at) SELECT i.id, COALESCE(MAX(a.n), 0) + 1, :1, :2, SYS_EXTRACT_UTC(SYSTIMESTAMP) FROM plenum_items i LEFT JOIN plenum_attempts a ON a.item_id = i.id WHERE i.id IN (:3) GROUP BY i.id"},
	} {
		text := strings.TrimSpace(c.stmt) + ";"
		if len(OracleSyntax(text)) == 0 && len(OracleTraps(c.stmt)) == 0 {
			t.Errorf("%s: accepted: %s", c.what, c.stmt)
		}
		// CheckOracle, which checks the generated files, refuses it too,
		// alone and as the DDL of an idempotent block (where the grammar
		// sees only a string).
		block := "BEGIN\n  EXECUTE IMMEDIATE '" + strings.ReplaceAll(c.stmt, "'", "''") + "';\nEXCEPTION\n  WHEN OTHERS THEN\n    IF SQLCODE != -955 THEN\n      RAISE;\n    END IF;\nEND;"
		for _, s := range []string{c.stmt, block} {
			if err := CheckOracle(s); err == nil {
				t.Errorf("%s: CheckOracle accepted: %s", c.what, s)
			}
		}
	}
	// And a generated file split into its statements keeps each block whole.
	file := "-- header\n\nBEGIN\n  EXECUTE IMMEDIATE 'DROP INDEX t_i';\nEXCEPTION\n  WHEN OTHERS THEN\n    NULL;\nEND;\n\nDELETE FROM t WHERE version = 2;\n"
	if got := SplitOracleFile(file); len(got) != 2 || !strings.HasSuffix(got[0], "END;") || got[1] != "DELETE FROM t WHERE version = 2;" {
		t.Errorf("SplitOracleFile = %q", got)
	}
}
