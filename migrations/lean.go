package migrations

// lean5 is version 5: version 4's item indexes, less the two that only
// one filter each needed. Every index of the items table costs every
// enqueue, claim and completion an entry (on PostgreSQL a claim and a
// completion change the state, so neither is a HOT update), and those two
// cost the hot path more than the pages they served are worth:
//
//   - items_state (state, id) served Items by state without a queue: that
//     is now the merge of one page per queue from items_browse, the
//     queues listed one index probe each;
//   - items_kind (kind, state, id) served Items by kind: that is now read
//     from items_browse per queue and state with the kind as a residual
//     filter, examining a bounded number of rows per call.
//
// items_browse (queue, state, id) stays: it serves a queue's pages and
// counts, and now the two reads above.
func lean5(n Names, idx func(table, name string, unique bool, cols []string) Change) Migration {
	drop := func(c Change) Change { c.DropIndex, c.Index = c.Index, nil; return c }
	return Migration{
		Version: 5,
		Name:    "lean",
		Changes: []Change{
			drop(idx(n.Items, "items_kind", false, []string{"kind", "state", "id"})),
			drop(idx(n.Items, "items_state", false, []string{"state", "id"})),
		},
	}
}
