package migrations

import "github.com/plenumdb/plenum/dialect"

// MaxFlowKeyLen bounds an item's flow key (core.ItemSpec.FlowKey) and a
// lane's key.
const MaxFlowKeyLen = 200

// flow8 is version 8: flow control. An item may carry a flow key; the
// items of one key of one queue form a lane, one row of the lanes table,
// which claims take in turn, each under that row's lock, so that a key's
// limits hold across every process:
//
//   - lanes: one row per (queue, flow key) ever enqueued, with the time
//     the lane may next give work (next_at: NULL while it has none, the
//     next token of its rate limit while it has run out), the state of
//     its rate limit (tat, the theoretical arrival time of the cell
//     rate algorithm), the time it was last served, and the key's own
//     limits, which replace the queue's defaults when set (weight is set
//     exactly when they are);
//   - queues: the limits of a queue's keys that have none of their own;
//   - items.flow_key and items.cost (the units of its key's rate limit a
//     claim of the item uses; NULL for 1);
//   - items_claim again, holding only the items without a flow key: the
//     items with one are claimed lane by lane, never by the queue's
//     claim, which would otherwise pass over every one of them in a
//     queue of keyed items. It is dropped and created again under its
//     name, as version 6 did with the keys' index, so that the claim's
//     plans and the index a dialect seeks through keep their name;
//   - items_flow: a lane's available items in claim order, the claim's
//     path within a lane; items_flowing: a lane's claimed items, which
//     the claim counts against its concurrency limits (at most the limit
//     of them, however many items the lane holds);
//   - lanes_key: a lane by its key (enqueue's upsert); lanes_next: the
//     lanes that may give work, in the order they get their turn.
func flow8(n Names, idx func(table, name string, unique bool, cols []string, where ...dialect.Cond) Change, claim func(Change) Change) Migration {
	drop := func(c Change) Change { c.DropIndex, c.Index = c.Index, nil; return c }
	col := func(table, name string, t dialect.ColumnType) Change {
		return Change{Column: &dialect.Column{Name: name, Type: t, Nullable: true}, ColumnTable: table}
	}
	limits := func(table string) []Change {
		return []Change{
			col(table, "max_running", dialect.Int),
			col(table, "per_process", dialect.Int),
			col(table, "rate", dialect.Int),
			col(table, "rate_per", dialect.BigInt),
			col(table, "burst", dialect.Int),
			col(table, "weight", dialect.Int),
		}
	}
	keyed := dialect.Cond{Column: "flow_key", NotNull: true}
	lanes := &dialect.Table{
		Name: n.Lanes,
		Columns: []dialect.Column{
			{Name: "id", Type: dialect.UUID},
			{Name: "queue", Type: dialect.String, Size: MaxQueueLen},
			{Name: "lane_key", Type: dialect.String, Size: MaxFlowKeyLen},
			{Name: "next_at", Type: dialect.Time, Nullable: true},
			{Name: "served_at", Type: dialect.Time, Nullable: true},
			{Name: "tat", Type: dialect.Time, Nullable: true},
			{Name: "max_running", Type: dialect.Int, Nullable: true},
			{Name: "per_process", Type: dialect.Int, Nullable: true},
			{Name: "rate", Type: dialect.Int, Nullable: true},
			{Name: "rate_per", Type: dialect.BigInt, Nullable: true},
			{Name: "burst", Type: dialect.Int, Nullable: true},
			{Name: "weight", Type: dialect.Int, Nullable: true},
			{Name: "updated_at", Type: dialect.Time},
		},
		PrimaryKey: []string{"id"},
	}
	changes := []Change{
		col(n.Items, "flow_key", dialect.String),
		col(n.Items, "cost", dialect.Int),
	}
	changes[0].Column.Size = MaxFlowKeyLen
	changes = append(changes, limits(n.Queues)...)
	changes = append(changes,
		drop(idx(n.Items, "items_claim", false, []string{"queue", "priority", "available_at", "id"}, dialect.Cond{Column: "state", Value: "available"})),
		claim(idx(n.Items, "items_claim", false, []string{"queue", "priority", "available_at", "id"}, dialect.Cond{Column: "state", Value: "available"}, dialect.Cond{Column: "flow_key", Null: true})),
		Change{Table: lanes},
		idx(n.Lanes, "lanes_key", true, []string{"queue", "lane_key"}),
		idx(n.Lanes, "lanes_next", false, []string{"queue", "next_at"}, dialect.Cond{Column: "next_at", NotNull: true}),
		idx(n.Items, "items_flow", false, []string{"queue", "flow_key", "priority", "available_at", "id"}, dialect.Cond{Column: "state", Value: "available"}, keyed),
		idx(n.Items, "items_flowing", false, []string{"queue", "flow_key", "claimed_by"}, dialect.Cond{Column: "state", Value: "claimed"}, keyed),
	)
	return Migration{Version: 8, Name: "flow", Changes: changes}
}
