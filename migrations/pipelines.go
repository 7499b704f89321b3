package migrations

import (
	"github.com/plenumdb/plenum/dialect"
)

// Size limits of version 3's text columns, in characters.
const (
	// MaxRunNameLen bounds a run's name (a pipeline's name).
	MaxRunNameLen = 128
	// MaxSignalNameLen bounds the name of a signal, and of what an item
	// waits for.
	MaxSignalNameLen = 128
	// MaxHaltReasonLen bounds a run's halt reason.
	MaxHaltReasonLen = 64
)

// pipelines3 is version 3: what durable pipelines store that version 2 has
// no place for.
//
//   - runs: one row per run of a pipeline, with its state (running,
//     waiting, halted, completed, cancelled), input, output, the latest
//     halt (reason, detail, id) and the item to enqueue when it halts;
//     (name, unique_key) is unique, so a run is created once per key;
//   - signals: one row per signal sent to a run, unique by (run_id, name,
//     unique_key) so that sending is idempotent; taken_by is the item
//     that took it, NULL while it waits to be taken;
//   - items.run_id, indexed for the items of one run in id order;
//   - items.wait_name and wait_until: the signal a waiting item waits
//     for and its deadline (the item itself stays available, with
//     available_at at the deadline, so the claim is unchanged);
//   - barriers.run_id, which the barrier's join inherits, and
//     barriers.generation, counting re-arms (NULL reads as 0).
func pipelines3(n Names, idx func(table, name string, unique bool, cols []string, where ...dialect.Cond) Change) Migration {
	runs := &dialect.Table{
		Name: n.Runs,
		Columns: []dialect.Column{
			{Name: "id", Type: dialect.UUID},
			{Name: "name", Type: dialect.String, Size: MaxRunNameLen},
			{Name: "unique_key", Type: dialect.String, Size: MaxKeyLen, Nullable: true},
			{Name: "state", Type: dialect.String, Size: 16},
			{Name: "input", Type: dialect.JSON, Nullable: true},
			{Name: "output", Type: dialect.JSON, Nullable: true},
			{Name: "halt_reason", Type: dialect.String, Size: MaxHaltReasonLen, Nullable: true},
			{Name: "halt_detail", Type: dialect.Text, Nullable: true},
			{Name: "halt_id", Type: dialect.UUID, Nullable: true},
			{Name: "halt_queue", Type: dialect.String, Size: MaxQueueLen, Nullable: true},
			{Name: "halt_kind", Type: dialect.String, Size: MaxKindLen, Nullable: true},
			{Name: "created_at", Type: dialect.Time},
			{Name: "updated_at", Type: dialect.Time},
			{Name: "finished_at", Type: dialect.Time, Nullable: true},
		},
		PrimaryKey: []string{"id"},
	}
	signals := &dialect.Table{
		Name: n.Signals,
		Columns: []dialect.Column{
			{Name: "id", Type: dialect.UUID},
			{Name: "run_id", Type: dialect.UUID},
			{Name: "name", Type: dialect.String, Size: MaxSignalNameLen},
			{Name: "unique_key", Type: dialect.String, Size: MaxKeyLen},
			{Name: "payload", Type: dialect.JSON, Nullable: true},
			{Name: "created_at", Type: dialect.Time},
			{Name: "taken_by", Type: dialect.UUID, Nullable: true},
			{Name: "taken_at", Type: dialect.Time, Nullable: true},
		},
		PrimaryKey: []string{"id"},
	}
	return Migration{
		Version: 3,
		Name:    "pipelines",
		Changes: []Change{
			{Table: runs},
			// Creating a run is idempotent by (name, key); NULL never collides.
			idx(n.Runs, "runs_key", true, []string{"name", "unique_key"}),
			{Table: signals},
			// Sending is idempotent by (run, name, key), and a waiter finds
			// a run's signals of one name by its prefix.
			idx(n.Signals, "signals_key", true, []string{"run_id", "name", "unique_key"}),
			{Column: &dialect.Column{Name: "run_id", Type: dialect.UUID, Nullable: true}, ColumnTable: n.Items},
			{Column: &dialect.Column{Name: "wait_name", Type: dialect.String, Size: MaxSignalNameLen, Nullable: true}, ColumnTable: n.Items},
			{Column: &dialect.Column{Name: "wait_until", Type: dialect.Time, Nullable: true}, ColumnTable: n.Items},
			// The items of a run, in keyset pages (RunItems, CancelRun), and
			// the waiters of one of its signals.
			idx(n.Items, "items_run", false, []string{"run_id", "id"}, dialect.Cond{Column: "run_id", NotNull: true}),
			{Column: &dialect.Column{Name: "run_id", Type: dialect.UUID, Nullable: true}, ColumnTable: n.Barriers},
			{Column: &dialect.Column{Name: "generation", Type: dialect.BigInt, Nullable: true}, ColumnTable: n.Barriers},
		},
	}
}
