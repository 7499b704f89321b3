package oracle_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/oracle"
)

// sqlReserved are Oracle's SQL reserved words (Oracle Database SQL
// Language Reference 19c and 23ai, "Oracle SQL Reserved Words").
var sqlReserved = strings.Fields(`ACCESS ADD ALL ALTER AND ANY AS ASC AUDIT BETWEEN BY CHAR CHECK
CLUSTER COLUMN COLUMN_VALUE COMMENT COMPRESS CONNECT CREATE CURRENT DATE DECIMAL DEFAULT DELETE
DESC DISTINCT DROP ELSE EXCLUSIVE EXISTS FILE FLOAT FOR FROM GRANT GROUP HAVING IDENTIFIED
IMMEDIATE IN INCREMENT INDEX INITIAL INSERT INTEGER INTERSECT INTO IS LEVEL LIKE LOCK LONG
MAXEXTENTS MINUS MLSLABEL MODE MODIFY NESTED_TABLE_ID NOAUDIT NOCOMPRESS NOT NOWAIT NULL NUMBER
OF OFFLINE ON ONLINE OPTION OR ORDER PCTFREE PRIOR PUBLIC RAW RENAME RESOURCE REVOKE ROW ROWID
ROWNUM ROWS SELECT SESSION SET SHARE SIZE SMALLINT START SUCCESSFUL SYNONYM SYSDATE TABLE THEN
TO TRIGGER UID UNION UNIQUE UPDATE USER VALIDATE VALUES VARCHAR VARCHAR2 VIEW WHENEVER WHERE WITH`)

// plsqlReserved are PL/SQL's reserved words (Oracle Database PL/SQL
// Language Reference, "PL/SQL Reserved Words"): the claim block and the
// DDL blocks name columns inside PL/SQL.
var plsqlReserved = strings.Fields(`ALL ALTER AND ANY AS ASC AT BEGIN BETWEEN BY CASE CHECK CLUSTERS
CLUSTER COLAUTH COLUMNS COMPRESS CONNECT CRASH CREATE CURSOR DECLARE DEFAULT DESC DISTINCT DROP
ELSE END EXCEPTION EXCLUSIVE FETCH FOR FROM FUNCTION GOTO GRANT GROUP HAVING IDENTIFIED IF IN
INDEX INDEXES INSERT INTERSECT INTO IS LIKE LOCK MINUS MODE NOCOMPRESS NOT NOWAIT NULL OF ON
OPTION OR ORDER OVERLAPS PROCEDURE PUBLIC RESOURCE REVOKE SELECT SHARE SIZE SQL START SUBTYPE
TABAUTH TABLE THEN TO TYPE UNION UNIQUE UPDATE VALUES VIEW VIEWS WHEN WHERE WITH`)

// maxIdentifier is Oracle's identifier limit since 12.2 (19c and 23ai),
// in bytes; before 12.2 it was 30.
const maxIdentifier = 128

// Every name Plenum creates, under the longest prefix allowed, is an
// unquoted identifier Oracle reads the same in upper case, within its
// length limit, and no column is a reserved word.
func TestIdentifiers_SafeUnquotedShortAndNotReserved(t *testing.T) {
	t.Parallel()
	reserved := map[string]bool{}
	for _, w := range append(sqlReserved, plsqlReserved...) {
		reserved[w] = true
	}
	prefix := strings.Repeat("p", migrations.MaxPrefixLen)
	var names, columns []string
	tables := []dialect.Table{migrations.MigrationsTable(prefix)}
	for _, m := range migrations.All(prefix) {
		for _, c := range m.Changes {
			if c.Table != nil {
				tables = append(tables, *c.Table)
			}
			if c.Index != nil {
				names = append(names, c.Index.Name)
			}
			if c.DropIndex != nil {
				names = append(names, c.DropIndex.Name)
			}
			if c.Column != nil {
				columns = append(columns, c.Column.Name)
			}
		}
	}
	for _, tb := range tables {
		names = append(names, tb.Name)
		for _, c := range tb.Columns {
			columns = append(columns, c.Name)
		}
	}
	for _, n := range append(names, columns...) {
		if len(n) > maxIdentifier {
			t.Errorf("%q is %d bytes, over Oracle's %d", n, len(n), maxIdentifier)
		}
		for i := 0; i < len(n); i++ {
			c := n[i]
			if !(c >= 'a' && c <= 'z' || c == '_' || c >= '0' && c <= '9' && i > 0) {
				t.Errorf("%q is not a plain unquoted identifier", n)
				break
			}
		}
		if reserved[strings.ToUpper(n)] {
			t.Errorf("%q is an Oracle reserved word", n)
		}
	}
	for _, n := range []string{"plenum_n", "plenum_dup", "plenum_keys", "picked", "taken", "packed", "pick"} {
		if reserved[strings.ToUpper(n)] {
			t.Errorf("the dialect's own name %q is reserved", n)
		}
	}
	t.Logf("%d names and %d columns checked; the longest name is %d bytes", len(names), len(columns), longest(names))
}

func longest(ss []string) int {
	n := 0
	for _, s := range ss {
		n = max(n, len(s))
	}
	return n
}

func schemaDDL(t *testing.T) string {
	t.Helper()
	var all []string
	for _, m := range migrations.All("plenum_") {
		up, _ := migrations.Statements(oracle.Dialect(), m)
		all = append(all, up...)
	}
	return strings.Join(all, "\n")
}

// Oracle stores the empty string as NULL: kind, join_kind and host may be empty, so they
// must be nullable; queue and state never are.
func TestCreateTable_EmptyStringColumnsAreNullable(t *testing.T) {
	t.Parallel()
	ddl := schemaDDL(t)
	for _, col := range []string{"kind", "join_kind", "host"} {
		if !strings.Contains(ddl, "\n  "+col+" VARCHAR2(") || strings.Contains(ddl, "\n  "+col+" VARCHAR2(128 CHAR) NOT NULL") || strings.Contains(ddl, "\n  "+col+" VARCHAR2(255 CHAR) NOT NULL") {
			t.Errorf("%s is not a nullable VARCHAR2:\n%s", col, ddl)
		}
	}
	for _, want := range []string{"\n  queue VARCHAR2(128 CHAR) NOT NULL", "\n  state VARCHAR2(16 CHAR) NOT NULL",
		"\n  id RAW(16) NOT NULL", "\n  payload CLOB CHECK (payload IS JSON),", "\n  sealed NUMBER(1) CHECK (sealed IN (0, 1)) NOT NULL",
		"\n  available_at TIMESTAMP(6) NOT NULL"} {
		if !strings.Contains(ddl, want) {
			t.Errorf("the DDL lacks %q", want)
		}
	}
	if strings.Contains(ddl, "IF NOT EXISTS") {
		t.Error("the DDL says IF NOT EXISTS, which only 23ai takes")
	}
}

// Keyless items of one queue must not collide on the key index: Oracle
// compares (queue, NULL) with (queue, NULL), so the key is entirely NULL
// for keyless rows.
func TestCreateIndex_UniqueKeyIsAllNullForKeylessRows(t *testing.T) {
	t.Parallel()
	ddl := schemaDDL(t)
	for _, want := range []string{
		"CREATE UNIQUE INDEX plenum_items_key ON plenum_items (unique_key, CASE WHEN unique_key IS NOT NULL THEN queue END)",
		"CREATE UNIQUE INDEX plenum_barriers_owner ON plenum_barriers (owner_id, name)",
		"CREATE INDEX plenum_items_claim ON plenum_items (CASE WHEN state = ''available'' THEN queue END, CASE WHEN state = ''available'' THEN priority END, CASE WHEN state = ''available'' THEN available_at END, CASE WHEN state = ''available'' THEN id END)",
		"CREATE INDEX plenum_items_lease ON plenum_items (state, lease_expires_at)",
		"CREATE INDEX plenum_items_barrier ON plenum_items (barrier_id, id)",
		"CREATE INDEX plenum_barriers_unfired ON plenum_barriers (fired_at, created_at, id)",
	} {
		if !strings.Contains(ddl, want) {
			t.Errorf("the DDL lacks %q", want)
		}
	}
	// Version 6's items_keyed leaves out the rows without a key: the rows
	// whose key is all NULL already, so it renders as version 1's
	// items_key did.
	if want := "CREATE UNIQUE INDEX plenum_items_keyed ON plenum_items (unique_key, CASE WHEN unique_key IS NOT NULL THEN queue END)"; !strings.Contains(ddl, want) {
		t.Errorf("the DDL lacks %q", want)
	}
	// Two nullable columns: every part is NULL unless both are set.
	got := oracle.Dialect().CreateIndex("t", dialect.Index{Name: "t_ab", Unique: true, Columns: []string{"a", "b", "c"}, Nullable: []string{"a", "b"}})
	if want := "CREATE UNIQUE INDEX t_ab ON t (CASE WHEN a IS NOT NULL AND b IS NOT NULL THEN a END, CASE WHEN a IS NOT NULL AND b IS NOT NULL THEN b END, CASE WHEN a IS NOT NULL AND b IS NOT NULL THEN c END)"; !strings.Contains(got[0], want) {
		t.Fatalf("CreateIndex = %s", got[0])
	}
}

// DDL commits on its own, and 19c has no IF NOT EXISTS: every statement is
// a block that ignores exactly "already exists" (or, to drop, "does not
// exist"), so the migrator can run a half-applied version again.
func TestDDL_SafeToRunAgain(t *testing.T) {
	t.Parallel()
	d := oracle.Dialect()
	stmts := append(d.CreateTable(migrations.MigrationsTable("p_")), d.CreateIndex("p_t", dialect.Index{Name: "p_i", Columns: []string{"a"}})...)
	for _, s := range stmts {
		if !strings.HasPrefix(s, "BEGIN\n  EXECUTE IMMEDIATE '") || !strings.Contains(s, "IF SQLCODE != -955 THEN\n      RAISE;") || !strings.HasSuffix(s, "END;") {
			t.Errorf("not an idempotent block:\n%s", s)
		}
	}
	drop := d.DropTable("p_t")
	if len(drop) != 1 || !strings.Contains(drop[0], "'DROP TABLE p_t PURGE'") || !strings.Contains(drop[0], "SQLCODE != -942") {
		t.Fatalf("DropTable = %q", drop)
	}
}

// Version 2 adds a column, drops (in its down) an index and the column:
// each is a block that ignores exactly the error of a statement already
// run (ORA-01430 for a column that exists, ORA-01418 for an index and
// ORA-00904 for a column that do not), so that the migrator can complete
// or undo a half-applied version by running it again.
func TestAlterDDL_SafeToRunAgain(t *testing.T) {
	t.Parallel()
	d := oracle.Dialect()
	for _, c := range []struct {
		stmts []string
		ddl   string
		code  string
	}{
		{d.AddColumn("p_t", dialect.Column{Name: "name", Type: dialect.String, Size: 255, Nullable: true}), "ALTER TABLE p_t ADD (name VARCHAR2(255 CHAR))", "-1430"},
		{d.AddColumn("p_t", dialect.Column{Name: "doc", Type: dialect.JSON, Nullable: true}), "ALTER TABLE p_t ADD (doc CLOB CHECK (doc IS JSON))", "-1430"},
		{d.AddColumn("p_t", dialect.Column{Name: "n", Type: dialect.Int}), "ALTER TABLE p_t ADD (n NUMBER(10) NOT NULL)", "-1430"},
		// An Empty column may hold '', which Oracle stores as NULL.
		{d.AddColumn("p_t", dialect.Column{Name: "label", Type: dialect.String, Size: 16, Empty: true}), "ALTER TABLE p_t ADD (label VARCHAR2(16 CHAR))", "-1430"},
		{d.DropColumn("p_t", dialect.Column{Name: "name", Type: dialect.String}), "ALTER TABLE p_t DROP COLUMN name", "-904"},
		{d.DropIndex("p_t", dialect.Index{Name: "p_i", Columns: []string{"a"}}), "DROP INDEX p_i", "-1418"},
		{d.DropIndex("p_t", dialect.Index{Name: "p_c", Columns: []string{"a"}, Claim: true, Where: []dialect.Cond{{Column: "s", Value: "x"}}}), "DROP INDEX p_c", "-1418"},
	} {
		if len(c.stmts) != 1 {
			t.Errorf("%s: %d statements, want 1", c.ddl, len(c.stmts))
			continue
		}
		want := "BEGIN\n  EXECUTE IMMEDIATE '" + c.ddl + "';\nEXCEPTION\n  WHEN OTHERS THEN\n    IF SQLCODE != " + c.code + " THEN\n      RAISE;\n    END IF;\nEND;"
		if c.stmts[0] != want {
			t.Errorf("got\n%s\nwant\n%s", c.stmts[0], want)
		}
	}
}

// Version 2 on Oracle: the added column is nullable, the finished-items
// index holds only finished rows (Oracle keeps no entry for an all-NULL
// key), the backfill compares the CLOB last_error with LIKE (a CLOB has no
// =) and reads the clock in UTC, and the down drops what the up made.
func TestVersion2_OracleStatements(t *testing.T) {
	t.Parallel()
	var v2 migrations.Migration
	for _, m := range migrations.All("plenum_") {
		if m.Version == 2 {
			v2 = m
		}
	}
	up, down := migrations.Statements(oracle.Dialect(), v2)
	all := strings.Join(append(slices.Clone(up), down...), "\n")
	for _, want := range []string{
		"'ALTER TABLE plenum_processes ADD (name VARCHAR2(255 CHAR))'",
		"'CREATE INDEX plenum_items_finished ON plenum_items (finished_at)'",
		"CASE WHEN i.last_error LIKE 'owner died while holding the claim' THEN 'crash'",
		"COALESCE(i.finished_at, SYS_EXTRACT_UTC(SYSTIMESTAMP))",
		"'DROP INDEX plenum_items_finished'",
		"'ALTER TABLE plenum_processes DROP COLUMN name'",
		"'DROP TABLE plenum_attempts PURGE'",
		"'DROP TABLE plenum_queues PURGE'",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("version 2 lacks %q:\n%s", want, all)
		}
	}
	if regexp.MustCompile(`(last_error|\berror) (=|!=|<>) `).MatchString(all) {
		t.Errorf("version 2 compares a CLOB with =:\n%s", all)
	}
	for _, s := range append(slices.Clone(up), down...) {
		if strings.Contains(s, "?") || strings.Contains(s, "CURRENT_TIMESTAMP") || strings.Contains(s, "ADD COLUMN") || strings.Contains(s, "IF EXISTS") {
			t.Errorf("not Oracle 19c SQL, or not a literal statement:\n%s", s)
		}
	}
}
