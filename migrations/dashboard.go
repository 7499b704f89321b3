package migrations

import (
	"github.com/plenumdb/plenum/dialect"
)

// dashboard4 is version 4: the indexes that serve a dashboard's reads
// (package browse's Items, Runs and RunBarriers) in keyset pages and bounded counts,
// so that a page costs the same with a million items as with a thousand.
// No table or column: only indexes, each costing every write of its table,
// so as few and as narrow as the pages allow.
//
//   - items_browse: a queue's items of one state in id order (Items by
//     queue, by queue and state, and a queue in any state as the merge of
//     one page per state; a queue's count per state, bounded);
//   - items_state: the items of one state in id order (Items by state);
//   - items_kind: a kind's items of one state in id order (Items by kind,
//     with or without a state; a kind in any state as the merge of one
//     page per state);
//   - runs_browse and runs_state: the same for runs, by name and state;
//   - barriers_run: a run's barriers in id order (RunBarriers).
func dashboard4(n Names, idx func(table, name string, unique bool, cols []string, where ...dialect.Cond) Change) Migration {
	return Migration{
		Version: 4,
		Name:    "dashboard",
		Changes: []Change{
			idx(n.Items, "items_browse", false, []string{"queue", "state", "id"}),
			idx(n.Items, "items_state", false, []string{"state", "id"}),
			idx(n.Items, "items_kind", false, []string{"kind", "state", "id"}),
			idx(n.Runs, "runs_browse", false, []string{"name", "state", "id"}),
			idx(n.Runs, "runs_state", false, []string{"state", "id"}),
			idx(n.Barriers, "barriers_run", false, []string{"run_id", "id"}, dialect.Cond{Column: "run_id", NotNull: true}),
		},
	}
}
