package migrations

import "github.com/plenumdb/plenum/dialect"

// halts7 is version 7: a run's halt names the item that halted it.
// Version 3 kept a halt's reason, detail and id on the run, but the item
// whose death halted the run only in the payload of the run's HaltItem, so
// that a run read by id (core's GetRun, a pipeline's Get) could not say
// which item, or which step, had halted it. runs.halt_item_id is that
// item, set with the rest of the halt and cleared with it on revive;
// NULL for a halt asked for through UpdateRun, and on the rows of halts
// older than this version.
func halts7(n Names) Migration {
	return Migration{
		Version: 7,
		Name:    "halts",
		Changes: []Change{
			{Column: &dialect.Column{Name: "halt_item_id", Type: dialect.UUID, Nullable: true}, ColumnTable: n.Runs},
		},
	}
}
