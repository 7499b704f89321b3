package migrations

import "github.com/plenumdb/plenum/dialect"

// MaxScheduleDefinitionLen bounds the stored definition of a schedule
// kept in the database (core.Store.SetSchedule): its timing and item, as
// JSON.
const MaxScheduleDefinitionLen = 64 << 10

// schedules9 is version 9: schedules kept in the database. The schedules
// table, which held only the watermarks of the schedules declared in code,
// holds the ones an operator sets too, in the same rows and under the
// same names, so that a name is one schedule whichever kind it is:
//
//   - definition: the schedule's timing and item, as JSON; NULL for a
//     schedule declared in code, whose definition is the program's;
//   - paused: whether its ticks are held back;
//   - revision: counts the changes to the row (set, pause, resume), which
//     the compare-and-set of the watermark compares too, so that a tick
//     is enqueued under the definition it was found with, and none after
//     a pause has committed;
//   - created_at: when it was first set.
//
// Every column is nullable: the rows of the code's schedules have none of
// them. Down deletes the stored schedules first, so that version 8 is left
// with the code's watermarks only, not rows it would take for them.
func schedules9(n Names) Migration {
	col := func(name string, t dialect.ColumnType) Change {
		return Change{Column: &dialect.Column{Name: name, Type: t, Nullable: true}, ColumnTable: n.Schedules}
	}
	return Migration{Version: 9, Name: "schedules", Changes: []Change{
		col("definition", dialect.Text),
		col("paused", dialect.Bool),
		col("revision", dialect.BigInt),
		col("created_at", dialect.Time),
		{Data: &DataStep{
			Table:     n.Schedules,
			DownReads: "revision",
			Up:        func(dialect.Schema) []string { return nil },
			Down: func(dialect.Schema) []string {
				return []string{"DELETE FROM " + n.Schedules + " WHERE revision IS NOT NULL"}
			},
		}},
	}}
}
