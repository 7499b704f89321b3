package sqlkit_test

import (
	"strings"
	"testing"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
)

func TestTableDDL(t *testing.T) {
	tb := dialect.Table{
		Name: "t",
		Columns: []dialect.Column{
			{Name: "id", Type: dialect.UUID},
			{Name: "note", Type: dialect.Text, Nullable: true},
		},
		PrimaryKey: []string{"id"},
	}
	colType := func(c dialect.Column) string { return strings.ToUpper(c.Type.String()) }
	want := "CREATE TABLE IF NOT EXISTS t (\n  id UUID NOT NULL,\n  note TEXT,\n  PRIMARY KEY (id)\n)"
	if got := sqlkit.TableDDL(tb, colType, false, ""); got != want {
		t.Errorf("TableDDL =\n%s\nwant\n%s", got, want)
	}
	got := sqlkit.TableDDL(tb, colType, true, " ENGINE=InnoDB")
	if !strings.Contains(got, "note TEXT NULL,") || !strings.HasSuffix(got, "\n) ENGINE=InnoDB") {
		t.Errorf("TableDDL with explicit NULL and options =\n%s", got)
	}
}

func TestInsertValues(t *testing.T) {
	if got, want := sqlkit.InsertValues("t", []string{"a", "b"}, "?, ?", 3), "INSERT INTO t (a, b) VALUES (?, ?), (?, ?), (?, ?)"; got != want {
		t.Errorf("InsertValues = %q, want %q", got, want)
	}
	if got := sqlkit.InsertValues("t", []string{"a"}, "?", 0); got != "INSERT INTO t (a) VALUES " {
		t.Errorf("InsertValues with no rows = %q", got)
	}
}

func TestIndexDDL(t *testing.T) {
	for _, tc := range []struct {
		ix   dialect.Index
		want string
	}{
		{dialect.Index{Name: "i", Columns: []string{"a", "b"}}, "CREATE INDEX IF NOT EXISTS i ON t (a, b)"},
		{dialect.Index{Name: "u", Columns: []string{"a"}, Unique: true}, "CREATE UNIQUE INDEX IF NOT EXISTS u ON t (a)"},
		{
			dialect.Index{Name: "p", Columns: []string{"a"}, Where: []dialect.Cond{{Column: "s", Value: "it's"}, {Column: "b", NotNull: true}}},
			"CREATE INDEX IF NOT EXISTS p ON t (a) WHERE s = 'it''s' AND b IS NOT NULL",
		},
		{
			dialect.Index{Name: "n", Columns: []string{"c", "id"}, Where: []dialect.Cond{{Column: "f", Null: true}}},
			"CREATE INDEX IF NOT EXISTS n ON t (c, id) WHERE f IS NULL",
		},
	} {
		if got := sqlkit.IndexDDL("t", tc.ix); got != tc.want {
			t.Errorf("IndexDDL(%+v) = %q, want %q", tc.ix, got, tc.want)
		}
	}
}
