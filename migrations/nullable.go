package migrations

import (
	"slices"

	"github.com/plenumdb/plenum/dialect"
)

// withNullable fills in each index's Nullable from the latest definition
// of its table in ms, so that a dialect rendering an index knows which of
// its columns may be NULL (on Oracle, Empty columns too, since the empty string is NULL
// there).
func withNullable(ms []Migration) []Migration {
	tables := map[string]*dialect.Table{}
	for _, m := range ms {
		for _, c := range m.Changes {
			if c.Table != nil {
				tables[c.Table.Name] = c.Table
			}
		}
	}
	for _, m := range ms {
		for _, c := range m.Changes {
			if c.Index == nil {
				continue
			}
			t := tables[c.IndexTable]
			if t == nil {
				continue
			}
			c.Index.Nullable = nil
			for _, name := range c.Index.Columns {
				if col, ok := t.Column(name); ok && (col.Nullable || col.Empty) && !slices.Contains(c.Index.Nullable, name) {
					c.Index.Nullable = append(c.Index.Nullable, name)
				}
			}
		}
	}
	return ms
}
