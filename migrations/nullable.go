package migrations

import (
	"slices"

	"github.com/plenumdb/plenum/dialect"
)

// withNullable fills in each index's Nullable (created, or dropped and so
// created again by its down) from its table's columns as the versions
// before it left them: the created table's, then the columns added since.
// A dialect rendering an index then knows which of its columns may be NULL
// (on Oracle, Empty columns too, since the empty string is NULL there).
func withNullable(ms []Migration) []Migration {
	columns := map[string][]dialect.Column{}
	for _, m := range ms {
		for _, c := range m.Changes {
			switch {
			case c.Table != nil:
				columns[c.Table.Name] = slices.Clone(c.Table.Columns)
			case c.Column != nil:
				columns[c.ColumnTable] = append(columns[c.ColumnTable], *c.Column)
			case c.Index != nil:
				fillNullable(c.Index, columns[c.IndexTable])
			case c.DropIndex != nil:
				fillNullable(c.DropIndex, columns[c.IndexTable])
			}
		}
	}
	return ms
}

// fillNullable sets ix.Nullable to those of its columns that may be NULL
// among cols.
func fillNullable(ix *dialect.Index, cols []dialect.Column) {
	ix.Nullable = nil
	for _, name := range ix.Columns {
		i := slices.IndexFunc(cols, func(c dialect.Column) bool { return c.Name == name })
		if i >= 0 && (cols[i].Nullable || cols[i].Empty) && !slices.Contains(ix.Nullable, name) {
			ix.Nullable = append(ix.Nullable, name)
		}
	}
}
