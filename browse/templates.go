package browse

import (
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/storesql"
)

// The statement catalog (internal/catalog) lists every statement a store
// sends, these included: a grammar check or a test that records what
// reaches a server finds them there.
func init() {
	storesql.Expose(storesql.BrowseTemplates[core.Item, core.Run, core.Barrier](templates))
}

// templates are every statement this package sends on s, at every size
// it sends them.
func templates(s *seam) []storesql.Template {
	fixed := func(name, q string) storesql.Template {
		return storesql.Template{Name: name, Render: func(int) []string { return []string{s.SQL(q)} }}
	}
	sized := func(name string, largest int, q func(n int) string) storesql.Template {
		return storesql.Template{Name: name, Largest: largest, Render: func(n int) []string { return []string{s.SQL(q(n))} }}
	}
	d := s.Dialect
	return []storesql.Template{
		{Name: "browse.items", Largest: MaxListLimit, Render: func(n int) []string {
			return shapesOf(s, itemShapes, n, itemStates, func(bits int, st core.State, n int) string {
				if !pagedShape(bits) {
					return ""
				}
				return qItemsPage(s, bits, st, n)
			})
		}},
		{Name: "browse.search-ids", Render: func(int) []string {
			var out []string
			for _, w := range searchWindows {
				for _, st := range itemStates {
					out = append(out, s.SQL(qSearchIDs(d, st, w)))
				}
			}
			return out
		}},
		{Name: "browse.search-range", Largest: MaxListLimit, Render: func(n int) []string {
			out := make([]string, len(itemStates))
			for i, st := range itemStates {
				out[i] = s.SQL(qSearchRange(s, st, n))
			}
			return out
		}},
		{Name: "browse.meta-window", Render: func(int) []string {
			var out []string
			for _, mf := range metaFilters {
				for _, w := range searchWindows {
					out = append(out, s.SQL(qMetaWindow(s, mf, w)))
				}
			}
			return out
		}},
		{Name: "browse.items-meta", Largest: MaxListLimit, Render: func(n int) []string {
			var out []string
			for _, mf := range metaFilters {
				out = append(out, shapesOf(s, itemShapes, n, itemStates, func(bits int, st core.State, n int) string {
					return qMetaItems(s, mf, bits, st, n)
				})...)
			}
			return out
		}},
		{Name: "browse.runs", Largest: MaxListLimit, Render: func(n int) []string {
			return shapesOf(s, runShapes, n, runStates, func(bits int, st core.RunState, n int) string { return qRunsPage(s, bits, st, n) })
		}},
		sized("browse.run-barriers", MaxListLimit, func(n int) string { return qRunBarriers(s, n) }),
		sized("browse.owners", MaxListLimit, func(n int) string { return qOwnerPage(d, n) }),
		fixed("browse.queue-first", qQueueFirst),
		fixed("browse.queue-next", qQueueNext),
		sized("browse.queue-counts", MaxCountCap+1, func(n int) string { return qQueueCounts(d, n) }),
		fixed("browse.oldest-available", qOldestAvailable(d)),
		fixed("browse.oldest-available-scan", qOldestAvailableScan),
		sized("browse.finished-window", MaxCountCap+1, func(n int) string { return qFinishedWindow(d, n) }),
		sized("browse.lanes-first", MaxListLimit, func(n int) string { return qLanePageFirst(d, n) }),
		sized("browse.lanes-next", MaxListLimit, func(n int) string { return qLanePageNext(d, n) }),
		fixed("browse.lane-one", qLaneOne),
		fixed("browse.lanes-queue-limit", qLaneQueueLimit),
		sized("browse.lane-counts", MaxCountCap+1, func(n int) string { return qLaneItemCounts(d, n) }),
	}
}

// shapesOf renders a keyset page of n rows in each of its filter
// combinations, those with a state (bit 2) once per state. A combination
// whose q is "" is one the store does not send.
func shapesOf[S ~string](s *seam, shapes, n int, states []S, q func(int, S, int) string) []string {
	var out []string
	for bits := range shapes {
		if bits&2 == 0 {
			if t := q(bits, "", n); t != "" {
				out = append(out, s.SQL(t))
			}
			continue
		}
		for _, st := range states {
			if t := q(bits, st, n); t != "" {
				out = append(out, s.SQL(t))
			}
		}
	}
	return out
}
