package migrations

import "github.com/plenumdb/plenum/dialect"

// Bounds of a run's context (core.Store.RunContext): what the steps of a
// run write for the steps after them.
const (
	// MaxRunContextKeyLen bounds a key of a run's context.
	MaxRunContextKeyLen = 128
	// MaxRunContextKeys bounds the keys one run's context holds.
	MaxRunContextKeys = 64
	// MaxRunContextValueLen bounds one value of a run's context, as JSON.
	MaxRunContextValueLen = 16 << 10
	// MaxRunContextLen bounds the values of one run's context together.
	MaxRunContextLen = 64 << 10
)

// runContext10 is version 10: a run's context, the small key-value
// document the steps of a run write, each write fenced with its step's
// completion, for the steps that follow. One row per (run, key), so that
// branches of a run writing different keys touch different rows, and no
// claim or completion of an item writes the table:
//
//   - run_id, ctx_key: the run and the key (the primary key, which is also
//     the path of a run's reads and of retention's purge);
//   - value: the key's value, as JSON;
//   - written_by: the item whose fenced completion wrote it last;
//   - updated_at: when it was written last.
//
// Down drops the table: version 9 has no run contexts.
func runContext10(n Names) Migration {
	return Migration{Version: 10, Name: "runcontext", Changes: []Change{
		{Table: &dialect.Table{
			Name: n.RunContext,
			Columns: []dialect.Column{
				{Name: "run_id", Type: dialect.UUID},
				{Name: "ctx_key", Type: dialect.String, Size: MaxRunContextKeyLen},
				{Name: "value", Type: dialect.JSON},
				{Name: "written_by", Type: dialect.UUID},
				{Name: "updated_at", Type: dialect.Time},
			},
			PrimaryKey: []string{"run_id", "ctx_key"},
		}},
	}}
}
