package browse

import (
	"strconv"
	"strings"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/storesql"
)

// The statements of this package's reads, written as core writes its own
// (core's statements.go): with '?' and the placeholders a store expands
// ({items}, {now}, ...), and listed for the catalog in templates.go. Every
// one is a keyset page or a bounded count, shaped so that an index serves
// it however large the tables grow.

// itemStates and runStates are every state a row can be in: a page of one
// queue's (or one pipeline's) rows in any state is the merge of one page
// per state, each read in order from the (queue, state, id) index.
var (
	itemStates = []core.State{core.StateAvailable, core.StateClaimed, core.StateCompleted, core.StateDead, core.StateCancelled}
	runStates  = []core.RunState{core.RunRunning, core.RunWaiting, core.RunHalted, core.RunCompleted, core.RunCancelled}
)

// listShape is which equality filters a keyset page has: the columns
// compared with a bound value, in argument order, and the column whose
// every value gets a page of its own to merge (split; "" for none).
type listShape struct {
	eq []string
	// lit is a condition written into the text (a state, validated): a
	// plan made for the statement, generic or not, sees its value, and
	// does not take another state's index on a guess.
	lit    string
	split  string
	values []string
}

// qNewestFirst is one page of n rows of table, newest first (ids are
// UUIDv7), below a bound id. With a split column, each of its values is a
// page of its own, in id order from the index that leads with the
// equality columns and the split column, and the outer query merges them:
// a page never sorts more than n rows per value, however many rows match.
func qNewestFirst(d dialect.Dialect, cols, table string, sh listShape, n int) string {
	page := func(extra string) string {
		var b strings.Builder
		b.WriteString("SELECT " + cols + " FROM " + table + " WHERE ")
		for _, c := range sh.eq {
			b.WriteString(c + " = ? AND ")
		}
		if sh.lit != "" {
			b.WriteString(sh.lit + " AND ")
		}
		b.WriteString(extra + "id < ? ORDER BY id DESC" + d.Limit(n))
		return b.String()
	}
	if sh.split == "" {
		return page("")
	}
	branches := make([]string, len(sh.values))
	for i, v := range sh.values {
		branches[i] = "SELECT " + cols + " FROM (" + page(sh.split+" = '"+v+"' AND ") + ") b" + strconv.Itoa(i)
	}
	return "SELECT " + cols + " FROM (" + strings.Join(branches, " UNION ALL ") + ") u ORDER BY id DESC" + d.Limit(n)
}

// itemShapes are the filter combinations of Items, by bit: queue 1, state
// 2, kind 4, run 8.
const itemShapes = 16

func itemShape(bits int, state core.State) listShape {
	var sh listShape
	if bits&1 != 0 {
		sh.eq = append(sh.eq, "queue")
	}
	if bits&2 != 0 {
		sh.lit = "state = '" + string(state) + "'"
	}
	if bits&4 != 0 {
		sh.eq = append(sh.eq, "kind")
	}
	if bits&8 != 0 {
		sh.eq = append(sh.eq, "run_id")
	}
	// A queue or a kind without a state is read from the index that leads
	// with it and the state: one page per state, merged.
	if bits&(1|4) != 0 && bits&2 == 0 {
		sh.split = "state"
		for _, st := range itemStates {
			sh.values = append(sh.values, string(st))
		}
	}
	return sh
}

// qItemsPage is one page of n items of the filter combination bits (and
// the state, when bits has one).
func qItemsPage(s *seam, bits int, state core.State, n int) string {
	return qNewestFirst(s.Dialect, s.ItemColumns, "{items}", itemShape(bits, state), n)
}

// runShapes are the filter combinations of Runs, by bit: name 1, state 2.
const runShapes = 4

func runShape(bits int, state core.RunState) listShape {
	var sh listShape
	if bits&1 != 0 {
		sh.eq = append(sh.eq, "name")
	}
	if bits&2 != 0 {
		sh.lit = "state = '" + string(state) + "'"
	}
	if bits == 1 {
		sh.split = "state"
		for _, st := range runStates {
			sh.values = append(sh.values, string(st))
		}
	}
	return sh
}

// qRunsPage is one page of n runs of the filter combination bits (and
// the state, when bits has one).
func qRunsPage(s *seam, bits int, state core.RunState, n int) string {
	return qNewestFirst(s.Dialect, s.RunColumns, "{runs}", runShape(bits, state), n)
}

// qRunBarriers is one page of n barriers of a run, in id order.
func qRunBarriers(s *seam, n int) string {
	return "SELECT " + s.BarrierColumns + " FROM {barriers} WHERE run_id = ? AND id > ? ORDER BY id" + s.Dialect.Limit(n)
}

// The distinct queues, one index probe each (a loose index scan): the
// smallest name after a name, among the items' queues and the queues
// table's rows. The first probe has no lower bound (Oracle reads an empty string as
// NULL).
const (
	qQueueFirst = "SELECT MIN(q) FROM (SELECT MIN(queue) q FROM {items} UNION ALL SELECT MIN(name) q FROM {queues}) t"
	qQueueNext  = "SELECT MIN(q) FROM (SELECT MIN(queue) q FROM {items} WHERE queue > ? UNION ALL SELECT MIN(name) q FROM {queues} WHERE name > ?) t"
)

// qQueueCounts counts one queue's items in each state, each count stopping
// at n rows: one bounded range of the (queue, state, id) index per state.
func qQueueCounts(d dialect.Dialect, n int) string {
	branches := make([]string, len(itemStates))
	for i, st := range itemStates {
		branches[i] = "SELECT '" + string(st) + "' s, COUNT(*) c FROM (SELECT 1 x FROM {items} WHERE queue = ? AND state = '" + string(st) + "'" + d.Limit(n) + ") b" + strconv.Itoa(i)
	}
	return strings.Join(branches, " UNION ALL ")
}

// qOldestAvailable is the earliest available_at of a queue's available
// items of the lowest priority at or above a bound: one probe of the claim
// index, which orders a queue's available items by priority, then
// available_at. Probing priority after priority finds the oldest of all.
func qOldestAvailable(d dialect.Dialect) string {
	return "SELECT priority, available_at FROM {items} WHERE queue = ? AND state = 'available' AND priority >= ? ORDER BY priority, available_at" + d.Limit(1)
}

// qOldestAvailableScan is the earliest available_at of a queue's
// available items in one statement, for a queue of more priorities than
// the probes are worth.
const qOldestAvailableScan = "SELECT MIN(available_at) FROM {items} WHERE queue = ? AND state = 'available'"

// qFinishedWindow counts the items finished since a time by queue, at most
// n of them in all: a bounded range of the finished index.
func qFinishedWindow(d dialect.Dialect, n int) string {
	return "SELECT queue, COUNT(*) FROM (SELECT queue FROM {items} WHERE finished_at >= {now+?}" + d.Limit(n) + ") w GROUP BY queue"
}

// pagedShape reports whether Items reads the filter combination bits with
// one qItemsPage statement from an index that leads with its filters. The
// others (a state alone, a kind without a run) are searched per queue and
// state (search.go).
func pagedShape(bits int) bool { return bits&8 != 0 || (bits&4 == 0 && bits != 2) }

// qSearchIDs is the ids of the w newest of a queue's items in one state
// below a bound id, newest first: where a kind's search may go, read from
// the (queue, state, id) index alone.
func qSearchIDs(d dialect.Dialect, st core.State, w int) string {
	return "SELECT id FROM {items} WHERE " + searchRange(st) + d.Limit(w)
}

// qSearchRange is the items of kind among a queue's items in one state
// from a low id (included) to a bound id (excluded), newest first, at most
// n of them: a range of the (queue, state, id) index whose rows qSearchIDs
// counted, the kind a residual filter on them.
func qSearchRange(s *seam, st core.State, n int) string {
	return "SELECT " + s.ItemColumns + " FROM {items} WHERE " + searchWhere(st) + " AND id >= ? AND kind = ?" + searchOrder(st) + s.Dialect.Limit(n)
}

// searchRange is a queue's items of one state below a bound id, newest
// first, in the order of the (queue, state, id) index. Claimed items are
// asked for as a range of one state, not an equality: PostgreSQL proves
// that "state = 'claimed'" implies the predicate of items_owner (claimed
// items by owner) and reads a queue's claimed items through it, every one
// of them and from the table, to sort them by id; a range proves nothing,
// and the index's order (state, then id) is then the id's. The price is
// that the bound id is no longer where the index read starts: a deep page
// steps over the newer claimed items, which are as many as the claims
// held, not as the table's rows.
func searchRange(st core.State) string { return searchWhere(st) + searchOrder(st) }

// searchWhere is searchRange's condition: a queue, a state, below an id.
func searchWhere(st core.State) string {
	if st == core.StateClaimed {
		return "queue = ? AND " + storesql.OneState(string(st)) + " AND id < ?"
	}
	return "queue = ? AND state = '" + string(st) + "' AND id < ?"
}

// searchOrder is searchRange's order, the index's.
func searchOrder(st core.State) string {
	if st == core.StateClaimed {
		return " ORDER BY state DESC, id DESC"
	}
	return " ORDER BY id DESC"
}

// laneColumns are what a page of lanes reads of each: its key, its turn,
// and its own limit (set exactly when weight is), in Lanes' scan order.
const laneColumns = "lane_key, next_at, max_running, per_process, rate, rate_per, burst, weight"

// qLanePageFirst and qLanePageNext are a page of n of a queue's lanes in
// key order, from the lanes' (queue, lane_key) index: the first page
// without a lower bound (Oracle reads an empty string as NULL), the next
// ones after a key. qLaneOne is one lane by its key.
func qLanePageFirst(d dialect.Dialect, n int) string {
	return "SELECT " + laneColumns + " FROM {lanes} WHERE queue = ? ORDER BY lane_key" + d.Limit(n)
}

func qLanePageNext(d dialect.Dialect, n int) string {
	return "SELECT " + laneColumns + " FROM {lanes} WHERE queue = ? AND lane_key > ? ORDER BY lane_key" + d.Limit(n)
}

const qLaneOne = "SELECT " + laneColumns + " FROM {lanes} WHERE queue = ? AND lane_key = ?"

// qLaneQueueLimit is whether a queue is paused (the bind is true) and
// its default limit, on its queues row.
const qLaneQueueLimit = "SELECT CASE WHEN paused = ? THEN 1 ELSE 0 END, max_running, per_process, rate, rate_per, burst, weight FROM {queues} WHERE name = ?"

// qLaneItemCounts counts one lane's claimed items (the slots of its
// concurrency limit in use, from items_flowing) and its available items
// (from items_flow), each count stopping at n rows.
func qLaneItemCounts(d dialect.Dialect, n int) string {
	branch := func(st core.State, alias string) string {
		return "SELECT '" + string(st) + "' s, COUNT(*) c FROM (SELECT 1 x FROM {items} WHERE queue = ? AND flow_key = ? AND state = '" + string(st) + "'" + d.Limit(n) + ") " + alias
	}
	return branch(core.StateClaimed, "lc") + " UNION ALL " + branch(core.StateAvailable, "la")
}
