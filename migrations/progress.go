package migrations

import "github.com/plenumdb/plenum/dialect"

// MaxProgressOutputLen bounds the partial output an item's progress
// holds, as JSON (core.Store.SetProgress).
const MaxProgressOutputLen = 16 << 10

// progress13 is version 13: the progress a running handler reports for
// its item (core.Store.SetProgress), one row per item, kept where claims
// and completions do not write, so that a handler reporting progress
// never adds a write to the items table nor an index to keep there:
//
//   - item_id: the item (the primary key, the path of every read and write
//     and of retention's delete with its item);
//   - done, total: the counters reported (total 0 when unknown);
//   - output: the partial output reported, as JSON, or NULL;
//   - attempt: the attempt of the item that wrote it last;
//   - updated_at: when it was written last.
//
// Down drops the table: version 12 has no progress.
func progress13(n Names) Migration {
	return Migration{Version: 13, Name: "progress", Changes: []Change{
		{Table: &dialect.Table{
			Name: n.Progress,
			Columns: []dialect.Column{
				{Name: "item_id", Type: dialect.UUID},
				{Name: "done", Type: dialect.BigInt},
				{Name: "total", Type: dialect.BigInt},
				{Name: "output", Type: dialect.JSON, Nullable: true},
				{Name: "attempt", Type: dialect.Int},
				{Name: "updated_at", Type: dialect.Time},
			},
			PrimaryKey: []string{"item_id"},
		}},
	}}
}
