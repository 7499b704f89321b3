package core

import (
	"strconv"
	"strings"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
)

// Flow control's statements (limits.go, lanes.go, laneclaim.go). See
// statements.go for how templates are named and listed.

// limitColumns are a limit's columns, on the queues table (a queue's
// default) and the lanes table (a key's own), in limitValues' order.
const limitColumns = "max_running, per_process, rate, rate_per, burst, weight"

const (
	qQueueSetLimit   = "UPDATE {queues} SET max_running = ?, per_process = ?, rate = ?, rate_per = ?, burst = ?, weight = ?, updated_at = {now} WHERE name = ?"
	qQueueClearLimit = "UPDATE {queues} SET max_running = NULL, per_process = NULL, rate = NULL, rate_per = NULL, burst = NULL, weight = NULL, updated_at = {now} WHERE name = ?"
	qQueueLimit      = "SELECT " + limitColumns + " FROM {queues} WHERE name = ?"
	// qQueueFlow is what a claim of lanes reads of its queue first: the
	// default limit, and whether the queue is paused.
	qQueueFlow = "SELECT " + limitColumns + ", CASE WHEN paused = ? THEN 1 ELSE 0 END FROM {queues} WHERE name = ?"

	qLaneSetLimit   = "UPDATE {lanes} SET max_running = ?, per_process = ?, rate = ?, rate_per = ?, burst = ?, weight = ?, updated_at = {now} WHERE queue = ? AND lane_key = ?"
	qLaneClearLimit = "UPDATE {lanes} SET max_running = NULL, per_process = NULL, rate = NULL, rate_per = NULL, burst = NULL, weight = NULL, updated_at = {now} WHERE queue = ? AND lane_key = ?"
	qLaneLimits     = "SELECT lane_key, " + limitColumns + " FROM {lanes} WHERE queue = ? AND weight IS NOT NULL ORDER BY lane_key"

	// laneOpen is a lane's first row, for InsertIgnore: it has no work
	// until an enqueue says so (qLanesReady).
	laneOpen = "?, ?, ?, NULL, {now}"

	// laneNextAt is the assignment that moves a lane's turn no later than
	// {now+?}: an enqueue's or a revive's, which gave the lane work. It
	// is written as an assignment that keeps an earlier turn, not as a
	// condition on the rows it updates, so that it locks the lane
	// whatever its turn: a claim holding the lane that has just found no
	// work there would otherwise set it idle after this transaction
	// looked, and the new work would wait for nothing.
	laneNextAt = "next_at = CASE WHEN next_at IS NULL OR next_at > {now+?} THEN {now+?} ELSE next_at END"

	// qLaneWakeItem wakes the lane of an item a signal has made
	// claimable: the item waited available, so its lane is there.
	qLaneWakeItem = "UPDATE {lanes} SET " + laneNextAt + " WHERE EXISTS (SELECT 1 FROM {items} i WHERE i.queue = {lanes}.queue AND i.flow_key = {lanes}.lane_key AND i.id = ?)"
	// qItemLane and qBarrierLanes read the lanes of what a revive has
	// just made claimable: an item, and a barrier's children.
	qItemLane     = "SELECT queue, flow_key FROM {items} WHERE id = ? AND flow_key IS NOT NULL"
	qBarrierLanes = "SELECT DISTINCT queue, flow_key FROM {items} WHERE barrier_id = ? AND state = 'available' AND flow_key IS NOT NULL"

	// purgeLaneGone is retention's condition on lanes (age bound once):
	// idle since the age, with no limit of its own, no rate state still
	// running, and no available or claimed item, whose counts and turn
	// it would carry.
	purgeLaneGone = "next_at IS NULL AND updated_at < {now+?} AND weight IS NULL AND (tat IS NULL OR tat < {now})" + laneNoWork
	laneNoWork    = " AND NOT EXISTS (SELECT 1 FROM {items} i WHERE i.queue = {lanes}.queue AND i.flow_key = {lanes}.lane_key AND i.state = 'available')" +
		" AND NOT EXISTS (SELECT 1 FROM {items} i WHERE i.queue = {lanes}.queue AND i.flow_key = {lanes}.lane_key AND i.state = 'claimed')"

	// purgeLaneLeft is retention's condition on lanes left with a turn
	// (age bound twice): a claim of keys without limits (keyclaim.go)
	// takes no lane, so a lane whose key ran dry there keeps the turn its
	// last work gave it. Such a lane goes as an idle one does, once its
	// turn and its last write are older than the age: whatever gives it
	// work or a limit writes updated_at, so that a deletion waiting on
	// that write finds the lane changed and leaves it. Found through
	// lanes_next, by its turn.
	purgeLaneLeft = "next_at < {now+?} AND updated_at < {now+?} AND weight IS NULL AND (tat IS NULL OR tat < {now})" + laneNoWork

	// laneClaimFilter is the claim's condition on lanes: the queue's
	// lanes whose turn has come, with room under their concurrency
	// limits (counted again once locked, in laneCounts; this only keeps
	// full lanes from taking the places of others), for a registered
	// owner. A lane's limit is its own when it has one (weight is set),
	// else the queue's default, bound.
	laneClaimFilter = "queue = ? AND next_at <= {now} AND EXISTS (SELECT 1 FROM {processes} p WHERE p.id = ?)" +
		" AND (" + laneMaxRunning + " = 0 OR (SELECT COUNT(*) FROM {items} i WHERE i.queue = {lanes}.queue AND i.flow_key = {lanes}.lane_key AND i.state = 'claimed') < " + laneMaxRunning + ")" +
		" AND (" + lanePerProcess + " = 0 OR (SELECT COUNT(*) FROM {items} i WHERE i.queue = {lanes}.queue AND i.flow_key = {lanes}.lane_key AND i.state = 'claimed' AND i.claimed_by = ?) < " + lanePerProcess + ")"
	laneMaxRunning = "CASE WHEN {lanes}.weight IS NULL THEN ? ELSE {lanes}.max_running END"
	lanePerProcess = "CASE WHEN {lanes}.weight IS NULL THEN ? ELSE {lanes}.per_process END"
	// laneClaimSet marks the lanes a claim takes: served_at is read back
	// as the database clock at the claim, and next_at sends the lane to
	// the back of the line, the turn of most lanes a claim serves; the
	// others are set apart afterwards (serveLanes).
	laneClaimSet     = "served_at = {now}, next_at = {now}"
	laneClaimOrderBy = "next_at, id"
)

// laneClaimColumns are what a claim of lanes returns of each, in
// laneClaim's scan order.
var laneClaimColumns = []string{"id", "lane_key", "served_at", "tat", "max_running", "per_process", "rate", "rate_per", "burst", "weight"}

// laneOpenColumns are the columns a lane's first row is written with.
var laneOpenColumns = []string{"id", "queue", "lane_key", "next_at", "updated_at"}

// laneConflict is the unique key of the lanes table.
var laneConflict = []string{"queue", "lane_key"}

// laneOpenSQL is the insert-or-ignore of n lanes' first rows.
func (s *Store) laneOpenSQL(n int) string {
	return s.d.InsertIgnore(s.names.Lanes, laneOpenColumns, s.expand.Replace(laneOpen), n, laneConflict)
}

// qLanesReady gives n lanes of one queue work from {now+?} on.
func qLanesReady(n int) string {
	return "UPDATE {lanes} SET " + laneNextAt + ", updated_at = {now} WHERE queue = ? AND lane_key IN (" + sqlkit.Placeholders(n) + ")"
}

// qLaneCounts counts the claimed items of n lanes of one queue, and
// those the claiming owner holds.
func qLaneCounts(n int) string {
	return "SELECT flow_key, COUNT(*), SUM(CASE WHEN claimed_by = ? THEN 1 ELSE 0 END) FROM {items}" +
		" WHERE queue = ? AND state = 'claimed' AND flow_key IN (" + sqlkit.Placeholders(n) + ") GROUP BY flow_key"
}

// qLaneFirst reads when the next available item of n lanes of one queue
// becomes claimable: the turn of a lane that has run out of work now.
func qLaneFirst(n int) string {
	return "SELECT flow_key, MIN(available_at) FROM {items}" +
		" WHERE queue = ? AND state = 'available' AND flow_key IN (" + sqlkit.Placeholders(n) + ") GROUP BY flow_key"
}

// A lane's available items that are due (its key compared apart), in
// claim order, along items_flow, and what a claim reads of each
// (laneTake, and the reads through dialect.KeyLister).
const (
	laneFilter           = "queue = ? AND state = 'available' AND available_at <= {now}"
	laneOrder            = "priority, available_at, id"
	laneCandidateColumns = "id, flow_key, cost, priority, available_at"
)

// laneTake is one lane's part of qLaneCandidates: its first f available
// items, in claim order, along items_flow.
func laneTake(d dialect.Dialect, f int) string {
	return "SELECT " + laneCandidateColumns + " FROM {items} WHERE queue = ? AND flow_key = ? AND state = 'available' AND available_at <= {now}" +
		" ORDER BY " + laneOrder + d.Limit(f)
}

// qLaneCandidates reads the first f available items of each of m lanes
// of one queue, in one statement.
func qLaneCandidates(d dialect.Dialect, m, f int) string {
	var b strings.Builder
	for i := range m {
		if i > 0 {
			b.WriteString(" UNION ALL ")
		}
		b.WriteString("SELECT * FROM (")
		b.WriteString(laneTake(d, f))
		b.WriteString(") t")
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}

// qLaneCandidatesListed is qLaneCandidates for a dialect that binds the
// lanes and what each offers as lists: one text for any lanes.
func qLaneCandidatesListed(k dialect.KeyLister) string {
	return k.FirstPerKey("{items}", laneCandidateColumns, "flow_key", laneFilter, laneOrder)
}

// qLanesServed sets the turn and the rate state of n lanes a claim took:
// each lane's next_at is {now+?} (NULL for an idle lane, bound as a
// NULL offset), its tat {now+?}, or unchanged where the offset is NULL;
// updated_at is when a lane went idle, retention's age.
func qLanesServed(n int) string { return lanesServed(n, "") }

// qLanesTaken is qLanesServed for lanes a claim only locked
// (dialect.RowLocker): it sets served_at too, as a claim of lanes would.
func qLanesTaken(n int) string { return lanesServed(n, ", served_at = {now}") }

// lanesServed is qLanesServed with more, assignments of its own.
func lanesServed(n int, more string) string {
	var b strings.Builder
	b.WriteString("UPDATE {lanes} SET next_at = CASE id")
	for range n {
		b.WriteString(" WHEN ? THEN {now+?}")
	}
	b.WriteString(" END, tat = CASE id")
	for range n {
		b.WriteString(" WHEN ? THEN COALESCE({now+?}, tat)")
	}
	b.WriteString(" END, updated_at = {now}")
	b.WriteString(more)
	b.WriteString(" WHERE id IN (")
	b.WriteString(sqlkit.Placeholders(n))
	b.WriteString(")")
	return b.String()
}

// qLanesNext reads the earliest turn of queue's lanes still to come, or
// come since {now+?} (a negative offset): when a claim that found nothing
// may find some.
const qLanesNext = "SELECT MIN(next_at) FROM {lanes} WHERE queue = ? AND next_at > {now+?}"

// qNextKeys steps through the keys of a queue's due available items in
// key order, after a bound key, up to a bound count of keys, with what
// each key's own limit says where its lane has one (weight set): 0 where
// it bounds claims, else its weight (each a probe of the lanes' unique
// key, where a join may read all the queue's lanes). One probe of
// items_flow a key, each the first entry past the key before, so that
// its cost follows the keys it returns, not the keys or items the queue
// holds. Nothing is locked or written: a claim of keys without limits
// (keyclaim.go) claims their items as the queue's claim does its own.
// The owner must still be registered, as for a claim of lanes. Sent
// where the dialect has Capabilities.RecursiveScan.
func qNextKeys(d dialect.Dialect) string {
	probe := func(after string) string {
		return "(SELECT i.flow_key FROM {items} i WHERE i.queue = ? AND i.state = 'available' AND i.flow_key IS NOT NULL" +
			" AND i.flow_key > " + after + " AND i.available_at <= {now} ORDER BY i.flow_key" + d.Limit(1) + ")"
	}
	from := ""
	if dual := d.Capabilities().DualTable; dual != "" {
		from = " FROM " + dual
	}
	return "WITH RECURSIVE k (flow_key, n) AS (SELECT " + probe("?") + ", 1" + from +
		" UNION ALL SELECT " + probe("k.flow_key") + ", k.n + 1 FROM k WHERE k.flow_key IS NOT NULL AND k.n < ?)" +
		" SELECT k.flow_key, (SELECT CASE WHEN l.max_running > 0 OR l.per_process > 0 OR l.rate > 0 THEN 0 ELSE l.weight END" +
		" FROM {lanes} l WHERE l.queue = ? AND l.lane_key = k.flow_key) FROM k" +
		" WHERE k.flow_key IS NOT NULL AND EXISTS (SELECT 1 FROM {processes} p WHERE p.id = ?)"
}
