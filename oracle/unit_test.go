package oracle_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	goora "github.com/sijms/go-ora/v2"
	"github.com/sijms/go-ora/v2/network"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/oracle"
)

func TestRegistered(t *testing.T) {
	t.Parallel()
	got, err := dialect.Lookup(oracle.Name)
	if err != nil || got != oracle.Dialect() || got.Name() != "oracle" {
		t.Fatalf("Lookup(oracle) = %v, %v", got, err)
	}
	if _, ok := got.(dialect.TableProber); !ok {
		t.Fatal("the dialect does not implement dialect.TableProber")
	}
	if _, ok := got.(dialect.IndexProber); !ok {
		t.Fatal("the dialect does not implement dialect.IndexProber")
	}
	if _, ok := got.(dialect.ColumnProber); !ok {
		t.Fatal("the dialect does not implement dialect.ColumnProber")
	}
	r, err := dialect.Registered(oracle.Name)
	if err != nil {
		t.Fatal(err)
	}
	if r.Open == nil || r.Version == nil || r.DSN.File || !strings.HasPrefix(r.DSN.Example, "oracle://") {
		t.Fatalf("registration = %+v: want Open, Version and an oracle:// example", r)
	}
	if _, err := r.Open(r.DSN.Example[len("oracle://"):]); err == nil || !strings.Contains(err.Error(), "invalid DSN") {
		t.Fatalf("the registered Open takes a DSN without the scheme: %v", err)
	}
}

func TestCapabilities_BoundINListsAndNeedDual(t *testing.T) {
	t.Parallel()
	c := oracle.Dialect().Capabilities()
	if c.MaxInList != 1000 || c.DualTable != "dual" || c.TransactionalDDL || c.ReturningUpdate || c.LockClause != " FOR UPDATE" {
		t.Fatalf("Capabilities() = %+v", c)
	}
}

func TestRebind_GoOraPositional(t *testing.T) {
	t.Parallel()
	got := oracle.Dialect().Rebind("SELECT a FROM t WHERE b = ? AND c = '?' AND d IN (?, ?)")
	if want := "SELECT a FROM t WHERE b = :1 AND c = '?' AND d IN (:2, :3)"; got != want {
		t.Fatalf("Rebind = %q, want %q", got, want)
	}
}

func TestClock_UTCFromSystimestamp(t *testing.T) {
	t.Parallel()
	d := oracle.Dialect()
	if got := d.Now(0); got != "SYS_EXTRACT_UTC(SYSTIMESTAMP)" {
		t.Fatalf("Now(0) = %q", got)
	}
	if got := d.Now(-1500 * time.Millisecond); got != "(SYS_EXTRACT_UTC(SYSTIMESTAMP) + NUMTODSINTERVAL(-1500000 / 1000000, 'SECOND'))" {
		t.Fatalf("Now(-1.5s) = %q", got)
	}
	if got := d.AddMicros("x"); got != "(x + NUMTODSINTERVAL(? / 1000000, 'SECOND'))" {
		t.Fatalf("AddMicros = %q", got)
	}
	for _, s := range []string{d.Now(0), d.Now(time.Hour), d.AddMicros(d.Now(0))} {
		if strings.Contains(s, "CURRENT_TIMESTAMP") || strings.Contains(s, "LOCALTIMESTAMP") || strings.Contains(s, "SYSDATE") {
			t.Fatalf("%q reads a clock in the session's or server's zone", s)
		}
	}
	if got := d.Limit(5); got != " FETCH FIRST 5 ROWS ONLY" {
		t.Fatalf("Limit(5) = %q", got)
	}
}

func TestScanTime_FieldsAreUTC(t *testing.T) {
	t.Parallel()
	d := oracle.Dialect()
	in := time.Date(2026, 7, 1, 12, 30, 0, 123456000, time.FixedZone("X", 3*3600))
	got, err := d.ScanTime(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 7, 1, 12, 30, 0, 123456000, time.UTC); !got.Equal(want) || got.Location() != time.UTC {
		t.Fatalf("ScanTime = %v, want %v", got, want)
	}
	if _, err := d.ScanTime("2026-01-01"); err == nil {
		t.Fatal("ScanTime took a string")
	}
	if _, err := d.ScanTime(nil); err == nil {
		t.Fatal("ScanTime took NULL")
	}
}

func TestJSON_LOBAbove4000Bytes(t *testing.T) {
	t.Parallel()
	d := oracle.Dialect()
	if d.JSON(nil) != nil {
		t.Fatal("JSON(nil) is not NULL")
	}
	small := []byte(`"` + strings.Repeat("a", oracle.LOBThreshold-2) + `"`)
	if v, ok := d.JSON(small).(string); !ok || len(v) != oracle.LOBThreshold {
		t.Fatalf("a %d-byte document binds as %T", len(small), d.JSON(small))
	}
	// 1,334 three-byte runes: 4,002 bytes, fewer than 4,000 characters.
	big := []byte(`"` + strings.Repeat("€", 1334) + `"`)
	v, ok := d.JSON(big).(goora.Clob)
	if !ok || !v.Valid || v.String != string(big) {
		t.Fatalf("a %d-byte document binds as %T, want a go-ora Clob", len(big), d.JSON(big))
	}
	if d.Param(dialect.JSON) != "TO_CLOB(?)" || d.Param(dialect.String) != "?" {
		t.Fatal("Param does not make JSON a CLOB in every row")
	}
	if d.Bool(true) != int64(1) || d.Bool(false) != int64(0) {
		t.Fatal("Bool is not NUMBER(1)")
	}
	if b, ok := d.UUID([16]byte{1, 2}).([]byte); !ok || len(b) != 16 || b[1] != 2 {
		t.Fatal("UUID is not 16 raw bytes")
	}
}

func oraErr(code int, msg string) error {
	return &network.OracleError{ErrCode: code, ErrMsg: msg}
}

func TestClassify(t *testing.T) {
	t.Parallel()
	d := oracle.Dialect()
	for _, c := range []struct {
		err  error
		want dialect.ErrorClass
	}{
		{oraErr(60, "ORA-00060: deadlock detected while waiting for resource"), dialect.Retryable},
		// Check's reads wrap the driver's error: a deadlock there is tried
		// again by core.Open, not taken for a setting.
		{fmt.Errorf("oracle: check: reading NLS_CHARACTERSET: %w", oraErr(60, "ORA-00060: deadlock detected while waiting for resource")), dialect.Retryable},
		{fmt.Errorf("claim: %w", oraErr(8177, "ORA-08177: can't serialize access for this transaction")), dialect.Retryable},
		{oraErr(30006, "ORA-30006: resource busy; acquire with WAIT timeout expired"), dialect.Retryable},
		// A concurrent MERGE of the same key, under any schema and prefix.
		{oraErr(1, "ORA-00001: unique constraint (APP.PLENUM_ITEMS_KEY) violated"), dialect.Retryable},
		{oraErr(1, "ORA-00001: unique constraint (APP.T1_BARRIERS_OWNER) violated on table APP.T1_BARRIERS columns (OWNER_ID, NAME)"), dialect.Retryable},
		// Anything else that is duplicate is not retried.
		{oraErr(1, "ORA-00001: unique constraint (APP.SYS_C0012345) violated"), dialect.UniqueViolation},
		{oraErr(1, "ORA-00001: unique constraint (APP.ORDERS_NUMBER_UK) violated"), dialect.UniqueViolation},
		{oraErr(3113, "ORA-03113: end-of-file on communication channel"), dialect.ConnectionLost},
		{oraErr(3135, "ORA-03135: connection lost contact"), dialect.ConnectionLost},
		{oraErr(28, "ORA-00028: your session has been killed"), dialect.ConnectionLost},
		{fmt.Errorf("commit: %w", io.EOF), dialect.ConnectionLost},
		{oraErr(942, "ORA-00942: table or view does not exist"), dialect.Other},
		{oraErr(2014, "ORA-02014: cannot select FOR UPDATE from view with DISTINCT, GROUP BY, etc."), dialect.Other},
		{context.Canceled, dialect.Other},
		{errors.New("boom"), dialect.Other},
		{nil, dialect.Other},
	} {
		if got := d.Classify(c.err); got != c.want {
			t.Errorf("Classify(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func claimSpec(limit int) dialect.ClaimSpec {
	var seek *dialect.Index
	for _, m := range migrations.All("plenum_") {
		for _, c := range m.Changes {
			if c.Index != nil && c.Index.Claim {
				seek = c.Index
			}
		}
	}
	return dialect.ClaimSpec{
		Table:      "plenum_items",
		Key:        "id",
		Filter:     "queue = ? AND state = 'available' AND available_at <= SYS_EXTRACT_UTC(SYSTIMESTAMP)",
		FilterArgs: []any{"q"},
		OrderBy:    "priority, available_at, id",
		Limit:      limit,
		Set:        "state = 'claimed', claim_token = ?",
		SetArgs:    []any{[]byte("token")},
		Returning:  []string{"id", "state"},
		Seek:       seek,
	}
}

// The claim locks rows with a FOR UPDATE SKIP LOCKED cursor and fetches
// exactly n of them inside PL/SQL; it never limits a locking query with
// ROWNUM or FETCH FIRST.
func TestClaim_CursorFetchesOnlyN(t *testing.T) {
	t.Parallel()
	block, args := oracle.ClaimBlock(claimSpec(7))
	for _, want := range []string{
		"FOR UPDATE SKIP LOCKED;",
		"FETCH pick BULK COLLECT INTO picked LIMIT 7;",
		"FORALL i IN 1 .. picked.COUNT",
		"WHERE id = picked(i) AND state = 'available'",
		"RETURNING id BULK COLLECT INTO taken;",
		"TYPE plenum_keys IS TABLE OF plenum_items.id%TYPE;",
	} {
		if !strings.Contains(block, want) {
			t.Errorf("the claim block lacks %q:\n%s", want, block)
		}
	}
	for _, bad := range []string{"ROWNUM", "FETCH FIRST", "FETCH NEXT", "OFFSET"} {
		if strings.Contains(strings.ToUpper(block), bad) {
			t.Errorf("the claim block limits rows with %s:\n%s", bad, block)
		}
	}
	// Filter args (the seek's equality repeated first), then the set's;
	// the OUT bind is the last placeholder.
	if n := strings.Count(block, "?"); n != len(args)+1 {
		t.Fatalf("%d placeholders for %d arguments and the OUT bind", n, len(args))
	}
	if args[0] != "q" || args[1] != "q" || string(args[2].([]byte)) != "token" {
		t.Fatalf("args = %v", args)
	}
	if !strings.HasSuffix(block, "? := packed;\nEND;") {
		t.Fatalf("the OUT bind is not the last placeholder:\n%s", block)
	}
	if got := oracle.ClaimRead(claimSpec(7), 3); got != "SELECT id, state FROM plenum_items WHERE id IN (?, ?, ?) ORDER BY priority, available_at, id" {
		t.Fatalf("claim read = %q", got)
	}
}

// The claim's cursor repeats, character for character, the expressions of
// the function-based index CreateIndex writes for the claim index, so that
// the optimizer can match them.
func TestClaim_UsesTheIndexExpressions(t *testing.T) {
	t.Parallel()
	spec := claimSpec(3)
	ddl := oracle.Dialect().CreateIndex(spec.Table, *spec.Seek)
	if len(ddl) != 1 {
		t.Fatalf("CreateIndex = %q", ddl)
	}
	m := regexp.MustCompile(`ON plenum_items \((.*)\)';`).FindStringSubmatch(ddl[0])
	if m == nil {
		t.Fatalf("no column list in %q", ddl[0])
	}
	exprs := strings.Split(strings.ReplaceAll(m[1], "''", "'"), ", ")
	if len(exprs) != 4 {
		t.Fatalf("index expressions %q", exprs)
	}
	block, _ := oracle.ClaimBlock(spec)
	if want := "WHERE " + exprs[0] + " = ? AND queue = ?"; !strings.Contains(block, want) {
		t.Errorf("the cursor does not seek with %q:\n%s", want, block)
	}
	if want := "ORDER BY " + strings.Join(exprs[1:], ", ") + " FOR UPDATE SKIP LOCKED"; !strings.Contains(block, want) {
		t.Errorf("the cursor does not order by %q:\n%s", want, block)
	}
	// Without the seek index the cursor falls back to the plain filter.
	spec.Seek = nil
	block, args := oracle.ClaimBlock(spec)
	if strings.Contains(block, "CASE WHEN") || len(args) != 2 {
		t.Fatalf("without Seek: %d args, block:\n%s", len(args), block)
	}
}

func TestClaim_RefusesBadSpecs(t *testing.T) {
	t.Parallel()
	d := oracle.Dialect()
	ctx := context.Background()
	if _, err := d.Claim(ctx, nil, claimSpec(1)); err == nil {
		t.Fatal("nil querier accepted")
	}
	for _, limit := range []int{0, 1001} {
		spec := claimSpec(limit)
		if _, err := d.Claim(ctx, stubQuerier{}, spec); err == nil {
			t.Fatalf("limit %d accepted", limit)
		}
	}
}

func TestInsertIgnore_MergeKeepsFirstOfEachKey(t *testing.T) {
	t.Parallel()
	d := oracle.Dialect()
	got := d.InsertIgnore("t", []string{"id", "queue", "unique_key", "payload"}, "?, ?, ?, TO_CLOB(?)", 2, []string{"queue", "unique_key"})
	want := "MERGE INTO t t USING (SELECT id, queue, unique_key, payload FROM (SELECT r.*, ROW_NUMBER() OVER (" +
		"PARTITION BY queue, unique_key, CASE WHEN queue IS NULL OR unique_key IS NULL THEN plenum_n END ORDER BY plenum_n) plenum_dup FROM (" +
		"SELECT :1 id, :2 queue, :3 unique_key, TO_CLOB(:4) payload, 1 plenum_n FROM dual UNION ALL " +
		"SELECT :5 id, :6 queue, :7 unique_key, TO_CLOB(:8) payload, 2 plenum_n FROM dual) r) WHERE plenum_dup = 1) s " +
		"ON (t.queue = s.queue AND t.unique_key = s.unique_key) WHEN NOT MATCHED THEN INSERT (id, queue, unique_key, payload) VALUES (s.id, s.queue, s.unique_key, s.payload)"
	if got != want {
		t.Fatalf("InsertIgnore =\n%s\nwant\n%s", got, want)
	}
	lit := d.InsertIgnore("m", []string{"version", "name", "applied_at"}, "1, 'a, b', SYS_EXTRACT_UTC(SYSTIMESTAMP)", 1, []string{"version"})
	if !strings.Contains(lit, "SELECT 1 version, 'a, b' name, SYS_EXTRACT_UTC(SYSTIMESTAMP) applied_at, 1 plenum_n FROM dual") {
		t.Fatalf("literal row = %s", lit)
	}
}

func TestSplitTop(t *testing.T) {
	t.Parallel()
	got := oracle.SplitTop("?, f(a, b), 'x, ''y''', (1 + NUMTODSINTERVAL(? / 1000000, 'SECOND')), 0")
	want := []string{"?", "f(a, b)", "'x, ''y'''", "(1 + NUMTODSINTERVAL(? / 1000000, 'SECOND'))", "0"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("splitTop = %q, want %q", got, want)
	}
}

func TestLockID_SchemaQualifiedAndInUserRange(t *testing.T) {
	t.Parallel()
	a, b := oracle.LockID("APP", "plenum_migrate"), oracle.LockID("OTHER", "plenum_migrate")
	if a == b {
		t.Fatal("the same lock id in two schemas")
	}
	for _, id := range []int64{a, b} {
		if id < 0 || id >= 1<<30 {
			t.Fatalf("lock id %d outside DBMS_LOCK's user range", id)
		}
	}
}

type stubQuerier struct{ dialect.Querier }

// The attempts' error text is a bind in an INSERT ... SELECT list: above
// 4,000 bytes it must be a CLOB, inside TO_CLOB, or Oracle sees a LONG
// where an expression may not have one.
func TestText_LOBAbove4000Bytes(t *testing.T) {
	t.Parallel()
	d := oracle.Dialect()
	if _, ok := d.(dialect.TextBinder); !ok {
		t.Fatal("the oracle dialect is not a dialect.TextBinder")
	}
	small := strings.Repeat("a", oracle.LOBThreshold)
	if v, ok := dialect.TextArg(d, small).(string); !ok || v != small {
		t.Fatalf("%d bytes of text bind as %T", len(small), dialect.TextArg(d, small))
	}
	big := strings.Repeat("€", 1334) // 4,002 bytes
	v, ok := dialect.TextArg(d, big).(goora.Clob)
	if !ok || !v.Valid || v.String != big {
		t.Fatalf("%d bytes of text bind as %T, want a go-ora Clob", len(big), dialect.TextArg(d, big))
	}
	if d.Param(dialect.Text) != "TO_CLOB(?)" {
		t.Fatalf("Param(Text) = %q, want TO_CLOB(?)", d.Param(dialect.Text))
	}
}
