package migrations

import (
	"github.com/plenumdb/plenum/dialect"
)

// The outcomes of a finished attempt, as the attempts table stores them.
const (
	// OutcomeFailed is an attempt whose handler returned an error.
	OutcomeFailed = "failed"
	// OutcomeTimeout is an attempt whose lease expired while its owner
	// lived.
	OutcomeTimeout = "timeout"
	// OutcomeCrash is an attempt whose owner died holding the claim.
	OutcomeCrash = "crash"
)

// The failure texts the core (version 1) writes to last_error for a crash
// and a timeout; the backfill reads the outcome from them.
const (
	crashText   = "owner died while holding the claim"
	timeoutText = "lease expired"
)

// runtime2 is version 2: what the worker runtime stores that version 1
// has no place for.
//
//   - attempts: one row per finished attempt of an item that did not
//     succeed, keyed by (item_id, n) with n numbering the item's rows from
//     1 in the order written (each row takes the item's highest n plus
//     one, so crashes, which give their attempt back, and revivals, which
//     reset it, never reuse a number), so that no id is made in SQL and an
//     item's history reads in order from the primary key;
//   - queues: a paused flag per queue, which every process reads before it
//     claims;
//   - schedules: one row per periodic schedule, keyed by its name, whose
//     last_tick (the last tick enqueued, in Unix microseconds, UTC) is the
//     watermark that makes each tick enqueued once, whatever retention
//     deletes; an integer, so that the compare-and-set on it compares
//     like with like on every database;
//   - processes.name: a label for a worker process, shown by inspect;
//   - items_finished: finished items by finish time, for retention's
//     bounded deletes of completed, dead and cancelled items older than an
//     age (finished_at is set exactly when an item reaches one of those
//     states, and cleared when it is revived);
//   - a backfill of attempts from the last_error of the items that have
//     one.
func runtime2(n Names, idx func(table, name string, unique bool, cols []string, where ...dialect.Cond) Change,
	sequential func(Change) Change) Migration {
	attempts := &dialect.Table{
		Name: n.Attempts,
		Columns: []dialect.Column{
			{Name: "item_id", Type: dialect.UUID},
			{Name: "n", Type: dialect.Int},
			{Name: "outcome", Type: dialect.String, Size: 16},
			{Name: "error", Type: dialect.Text, Nullable: true},
			{Name: "ended_at", Type: dialect.Time},
		},
		PrimaryKey: []string{"item_id", "n"},
	}
	queues := &dialect.Table{
		Name: n.Queues,
		Columns: []dialect.Column{
			{Name: "name", Type: dialect.String, Size: MaxQueueLen},
			{Name: "paused", Type: dialect.Bool},
			{Name: "updated_at", Type: dialect.Time},
		},
		PrimaryKey: []string{"name"},
	}
	schedules := &dialect.Table{
		Name: n.Schedules,
		Columns: []dialect.Column{
			{Name: "name", Type: dialect.String, Size: MaxScheduleLen},
			{Name: "last_tick", Type: dialect.BigInt},
			{Name: "updated_at", Type: dialect.Time},
		},
		PrimaryKey: []string{"name"},
	}
	return Migration{
		Version: 2,
		Name:    "runtime",
		Changes: []Change{
			{Table: attempts},
			{Table: queues},
			{Table: schedules},
			{Column: &dialect.Column{Name: "name", Type: dialect.String, Size: 255, Nullable: true}, ColumnTable: n.Processes},
			sequential(idx(n.Items, "items_finished", false, []string{"finished_at"}, dialect.Cond{Column: "finished_at", NotNull: true})),
			{Data: backfillAttempts(n)},
		},
	}
}

// backfillAttempts writes one attempts row for every item with a
// last_error, unless the item already has a row (so it runs again safely):
// numbered 1, the first of the item's history under the attempts table's
// one rule (its highest n plus one), the outcome read from the core's
// failure texts, the error, and the time it
// finished, or the migration's time for an item that will run again. Its
// down deletes exactly those rows. The texts are compared with LIKE, which
// every database allows on its large text type (Oracle's CLOB has no =);
// they hold no wildcard.
func backfillAttempts(n Names) *DataStep {
	const first = "1"
	return &DataStep{
		Table: n.Attempts,
		Up: func(d dialect.Schema) []string {
			return []string{"INSERT INTO " + n.Attempts + " (item_id, n, outcome, error, ended_at)" +
				" SELECT i.id, " + first + "," +
				" CASE WHEN i.last_error LIKE " + quote(crashText) + " THEN " + quote(OutcomeCrash) +
				" WHEN i.last_error LIKE " + quote(timeoutText) + " THEN " + quote(OutcomeTimeout) +
				" ELSE " + quote(OutcomeFailed) + " END," +
				" i.last_error, COALESCE(i.finished_at, " + d.Now(0) + ")" +
				" FROM " + n.Items + " i WHERE i.last_error IS NOT NULL" +
				" AND NOT EXISTS (SELECT 1 FROM " + n.Attempts + " a WHERE a.item_id = i.id)"}
		},
		Down: func(d dialect.Schema) []string {
			return []string{"DELETE FROM " + n.Attempts + " WHERE EXISTS (SELECT 1 FROM " + n.Items + " i" +
				" WHERE i.id = " + n.Attempts + ".item_id AND i.last_error IS NOT NULL AND " + n.Attempts + ".n = " + first + ")"}
		},
	}
}
