package migrations

import (
	"slices"
	"testing"

	"github.com/plenumdb/plenum/dialect"
)

// An index on a column a later version added knows that column may be
// NULL, as does the index a version drops (its down creates it again);
// a column added after the index was made does not count for it.
func TestWithNullable_ReadsAddedColumns(t *testing.T) {
	t.Parallel()
	tbl := &dialect.Table{Name: "t", Columns: []dialect.Column{{Name: "a", Type: dialect.Int}}, PrimaryKey: []string{"a"}}
	early := &dialect.Index{Name: "t_early", Columns: []string{"a", "b"}}
	onB := &dialect.Index{Name: "t_b", Columns: []string{"a", "b"}, Unique: true}
	onC := &dialect.Index{Name: "t_c", Columns: []string{"c"}, Unique: true}
	dropped := &dialect.Index{Name: "t_b", Columns: []string{"a", "b"}, Unique: true}
	ms := withNullable([]Migration{
		{Version: 1, Changes: []Change{{Table: tbl}, {Index: early, IndexTable: "t"}}},
		{Version: 2, Changes: []Change{
			{Column: &dialect.Column{Name: "b", Type: dialect.String, Nullable: true}, ColumnTable: "t"},
			{Column: &dialect.Column{Name: "c", Type: dialect.String, Nullable: true, Empty: true}, ColumnTable: "t"},
			{Index: onB, IndexTable: "t"},
			{Index: onC, IndexTable: "t"},
		}},
		{Version: 3, Changes: []Change{{DropIndex: dropped, IndexTable: "t"}}},
	})
	if len(ms) != 3 {
		t.Fatalf("%d migrations", len(ms))
	}
	for _, c := range []struct {
		ix   *dialect.Index
		want []string
	}{{early, nil}, {onB, []string{"b"}}, {onC, []string{"c"}}, {dropped, []string{"b"}}} {
		if !slices.Equal(c.ix.Nullable, c.want) {
			t.Errorf("%s: Nullable = %q, want %q", c.ix.Name, c.ix.Nullable, c.want)
		}
	}
	if len(tbl.Columns) != 1 {
		t.Errorf("the created table's definition changed: %+v", tbl.Columns)
	}
}
