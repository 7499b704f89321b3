package core

import (
	"strings"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
	"github.com/plenumdb/plenum/internal/storesql"
)

// Every SQL template the core sends is named here, and only here: the call
// sites use these names, and templates.go lists them for the statement
// catalog (internal/catalog), so that a test can render every statement
// the store can send and check it against what it records the store
// sending.
//
// Templates are written with '?' and the placeholders of expansions
// (sqltext.go). A fixed one is a constant, sent through Store.sql. One
// whose text depends on a count (an IN list, a CASE list, a LIMIT, a
// multi-row VALUES) is a function of that count, n.
//
// Adding a statement: write its template here (a constant, or a function
// of n for a size-dependent one), use the name at the call site, and add
// one entry to templates (templates.go) that renders it the way the call
// site sends it, and call it from internal/testkit/storeworkload.
// TestCatalog_CoversEveryStatement (internal/catalog) fails on a statement
// sent that no entry renders, and core/binds_test.go counts its binds.

// Items.
const (
	qItemGet          = "SELECT " + itemColumns + " FROM {items} WHERE id = ?"
	qItemLock         = "SELECT state, barrier_id FROM {items} WHERE id = ?{lock}"
	qItemCancel       = "UPDATE {items} SET state = 'cancelled', claim_token = NULL, lease_expires_at = NULL, finished_at = {now} WHERE id = ?"
	qItemRevive       = "UPDATE {items} SET state = 'available', available_at = {now}, attempt = 0, crash_count = 0, finished_at = NULL, barrier_id = ? WHERE id = ?"
	qCountsAll        = "SELECT state, COUNT(*) FROM {items} GROUP BY state"
	qCountsQueue      = "SELECT state, COUNT(*) FROM {items} WHERE queue = ? GROUP BY state"
	qItemBarrier      = "SELECT barrier_id FROM {items} WHERE id = ?"
	qItemLeaveBarrier = "UPDATE {items} SET barrier_id = NULL WHERE id = ?"
	qClaimLock        = "SELECT state, claim_token, attempt, max_attempts, barrier_id, queue, flow_key FROM {items} WHERE id = ?{lock}"
	qFailDead         = "UPDATE {items} SET state = 'dead', finished_at = {now}, lease_expires_at = NULL, last_error = ? WHERE id = ?"
	qFailRetry        = "UPDATE {items} SET state = 'available', available_at = {now+?}, lease_expires_at = NULL, last_error = ? WHERE id = ?"
	qRelease          = "UPDATE {items} SET state = 'available', available_at = {now+?}, lease_expires_at = NULL, attempt = attempt - 1 WHERE id = ?"
	qNow              = "SELECT {now}"
)

// qClaimLockWithin is qClaimLock for a claim with a deadline (Claim.Within):
// its last column says, on the database clock and while the row is locked,
// whether the claim was taken less than Within ago (the bind is -Within).
const qClaimLockWithin = "SELECT state, claim_token, attempt, max_attempts, barrier_id, queue, flow_key, CASE WHEN claimed_at > {now+?} THEN 1 ELSE 0 END FROM {items} WHERE id = ?{lock}"

// Owners.
const (
	qOwnerExists       = "SELECT COUNT(*) FROM {processes} WHERE id = ?"
	qOwnerRegister     = "INSERT INTO {processes} (id, name, host, pid, started_at, last_heartbeat_at, heartbeats) VALUES (?, ?, ?, ?, {now}, {now}, 0)"
	qOwnerHeartbeat    = "UPDATE {processes} SET last_heartbeat_at = {now}, heartbeats = heartbeats + 1 WHERE id = ?"
	qOwnerReleaseItems = "UPDATE {items} SET state = 'available', available_at = {now}, lease_expires_at = NULL, attempt = attempt - 1 WHERE claimed_by = ? AND state = 'claimed'"
	qOwnerDelete       = "DELETE FROM {processes} WHERE id = ?"
	// qOwnerClaimedLanes counts an owner's claimed items by lane (a NULL
	// flow key for those without one), before a clean stop hands them
	// back: on items_owner.
	qOwnerClaimedLanes = "SELECT queue, flow_key, COUNT(*) FROM {items} WHERE claimed_by = ? AND state = 'claimed' GROUP BY queue, flow_key"
	qReapOwners        = "DELETE FROM {processes} WHERE last_heartbeat_at < {now+?}"
)

// Barriers.
const (
	qBarrierUnfail       = "UPDATE {barriers} SET failed = failed - 1 WHERE id = ? AND fired_at IS NULL"
	qBarrierByName       = "SELECT " + barrierColumns + " FROM {barriers} WHERE owner_id = ? AND name = ?{lock}"
	qBarrierLockDispatch = "SELECT sealed, dispatch_cursor, run_id FROM {barriers} WHERE id = ? AND owner_id = ?{lock}"
	qBarrierDispatched   = "UPDATE {barriers} SET expected = expected + ?, dispatch_cursor = ? WHERE id = ?"
	qBarrierLockSealed   = "SELECT sealed FROM {barriers} WHERE id = ? AND owner_id = ?{lock}"
	qBarrierExpectOne    = "UPDATE {barriers} SET expected = expected + 1 WHERE id = ? AND fired_at IS NULL"
	qBarrierSeal         = "UPDATE {barriers} SET sealed = ?, parent_barrier_id = ? WHERE id = ?"
	qBarrierHandOver     = "UPDATE {barriers} SET expected = expected - 1 WHERE id = ?"
	qBarrierArrive       = "UPDATE {barriers} SET arrived = arrived + ?, failed = failed + ? WHERE id = ?"
	qBarrierFire         = "UPDATE {barriers} SET fired_at = {now}, join_item_id = ? WHERE id = ? AND fired_at IS NULL AND sealed = ? AND arrived + failed = expected"
	// qBarrierJoinSpec reads what the join is made of, and the state of the
	// barrier's run: a cancelled run's join is created cancelled.
	qBarrierJoinSpec = "SELECT parent_barrier_id, failed, on_child_failure, join_queue, join_kind, join_payload, join_priority, join_max_attempts, owner_id, name, expected, arrived, run_id," +
		" (SELECT r.state FROM {runs} r WHERE r.id = {barriers}.run_id) FROM {barriers} WHERE id = ?"
	qBarrierGet = "SELECT " + barrierColumns + " FROM {barriers} WHERE id = ?"
	// qBarrierArriveDue counts arrivals and says, from the row it just
	// changed and holds locked, whether the barrier is now due to fire:
	// a barrier that is not due costs no attempt to fire it.
	qBarrierArriveDue = "UPDATE {barriers} SET arrived = arrived + ?, failed = failed + ? WHERE id = ? RETURNING CASE WHEN fired_at IS NULL AND sealed = ? AND arrived + failed = expected THEN 1 ELSE 0 END"

	joinColumns    = "id, queue, kind, payload, priority, state, available_at, attempt, max_attempts, crash_count, barrier_id, join_barrier_id, created_at, run_id"
	qJoinInsert    = "INSERT INTO {items} (" + joinColumns + ") VALUES (?, ?, ?, {json?}, ?, 'available', {now}, 0, ?, 0, ?, ?, {now}, ?)"
	qJoinDead      = "INSERT INTO {items} (" + joinColumns + ", last_error, finished_at) VALUES (?, ?, ?, {json?}, ?, 'dead', {now}, 0, ?, 0, ?, ?, {now}, ?, ?, {now})"
	qJoinCancelled = "INSERT INTO {items} (" + joinColumns + ", finished_at) VALUES (?, ?, ?, {json?}, ?, 'cancelled', {now}, 0, ?, 0, ?, ?, {now}, ?, {now})"
	barrierOpen    = "?, ?, ?, 0, 0, 0, ?, ?, ?, {json?}, ?, ?, ?, {now}, ?"
	claimFilter    = "queue = ? AND state = 'available' AND flow_key IS NULL AND available_at <= {now} AND EXISTS (SELECT 1 FROM {processes} p WHERE p.id = ?) AND " + queueUnpaused
	claimSet       = "state = 'claimed', claim_token = ?, claimed_by = ?, claimed_at = {now}, lease_expires_at = {now+?}, attempt = attempt + 1"
	claimOrderBy   = "priority, available_at, id"
)

// barrierOpenConflict is the unique key a barrier is opened on.
var barrierOpenConflict = []string{"owner_id", "name"}

// itemConflict is the unique key of keyed items.
var itemConflict = []string{"queue", "unique_key"}

// barrierOpenColumns are the columns a new barrier row is written with.
var barrierOpenColumns = []string{"id", "owner_id", "name", "expected", "arrived", "failed", "sealed", "join_queue", "join_kind", "join_payload", "join_priority", "join_max_attempts", "on_child_failure", "created_at", "run_id"}

// qEarlierParent finds the barrier an item's earlier join reports to.
func qEarlierParent(d dialect.Dialect) string {
	return "SELECT parent_barrier_id FROM {barriers} WHERE owner_id = ? AND parent_barrier_id IS NOT NULL" + d.Limit(1)
}

// qUnfired is one page of n unfired barriers.
func qUnfired(d dialect.Dialect, n int) string {
	return "SELECT " + barrierColumns + " FROM {barriers} WHERE fired_at IS NULL AND created_at <= {now+?} ORDER BY created_at, id" + d.Limit(n)
}

// qChildren is one page of n children.
func qChildren(d dialect.Dialect, n int) string {
	return "SELECT " + itemColumns + " FROM {items} WHERE barrier_id = ? AND id > ? ORDER BY id" + d.Limit(n)
}

// qExisting finds the items holding n keys of one queue, and their states
// (ItemSpec.KeyStates); a barrier's children (child) also say whether each
// is the barrier's own.
func qExisting(n int, child bool) string {
	own := "1"
	if child {
		own = "CASE WHEN barrier_id = ? OR EXISTS (SELECT 1 FROM {barriers} b WHERE b.owner_id = {items}.id AND b.parent_barrier_id = ?) THEN 1 ELSE 0 END"
	}
	return "SELECT id, unique_key, " + own + ", state FROM {items} WHERE queue = ? AND unique_key IN (" + sqlkit.Placeholders(n) + ")"
}

// idsIn is the condition "id is one of these n": one list parameter where
// the dialect binds lists (dialect.UUIDLister), else an IN list of n.
func (s *Store) idsIn(n int) string { return s.columnIn("id", n) }

// columnIn is the condition "column is one of these n UUIDs", as idsIn.
func (s *Store) columnIn(column string, n int) string {
	if s.lister != nil {
		return s.lister.InUUIDs(column)
	}
	return column + " IN (" + sqlkit.Placeholders(n) + ")"
}

// heldBy is the condition "these n items, with this claim token, in this
// state". The state is asked for as a range of one value, not an
// equality: PostgreSQL proves that "state = 'claimed'" implies the
// predicate of the partial indexes of claimed items (items_owner,
// items_lease) and plans a completion of 100 ids as a scan of a whole such
// index, which holds an entry for every item claimed since the table's
// last vacuum, dead ones included; a range implies no predicate, and the
// primary key finds each id in a few reads.
func (s *Store) heldBy(n int, state State) string {
	return s.idsIn(n) + " AND claim_token = ? AND " + oneState(state)
}

// oneState is "state = st" written as a range of one value, which matches
// no partial index's predicate (see heldBy).
func oneState(st State) string { return storesql.OneState(string(st)) }

// qHeldLock locks, in id order, those of n items still claimed by a token.
func (s *Store) qHeldLock(n int) string {
	return "SELECT id, barrier_id FROM {items} WHERE " + s.heldBy(n, StateClaimed) + " ORDER BY id{lock}"
}

// qHeldCompleted reads those of n items completed by a token.
func (s *Store) qHeldCompleted(n int) string {
	return "SELECT id, barrier_id FROM {items} WHERE " + s.heldBy(n, StateCompleted)
}

// qComplete completes n items of one token: with one result for all
// (same), or a CASE of one result each; returning adds RETURNING.
func (s *Store) qComplete(n int, same, returning bool) string {
	return s.qCompleteWhere(n, same, returning, "")
}

// qCompleteMemberless completes those of n items of one token that
// belong to no barrier: a completion that counts nowhere, made without
// reading the rows first (completeAt).
func (s *Store) qCompleteMemberless(n int, same bool) string {
	return s.qCompleteWhere(n, same, false, " AND barrier_id IS NULL")
}

// qCompleteMembers completes those of n items of one token that belong
// to the barrier bound last: a completion whose every change counts at
// that barrier, made without reading the rows first (completeAt).
func (s *Store) qCompleteMembers(n int, same bool) string {
	return s.qCompleteWhere(n, same, false, " AND barrier_id = ?")
}

// qCompleteWhere is qComplete with and appended to its condition.
func (s *Store) qCompleteWhere(n int, same, returning bool, and string) string {
	var b strings.Builder
	b.WriteString("UPDATE {items} SET state = 'completed', finished_at = {now}, lease_expires_at = NULL, result = ")
	if same {
		b.WriteString("{json?}")
	} else {
		b.WriteString("CASE id")
		for range n {
			b.WriteString(" WHEN ? THEN {json?}")
		}
		b.WriteString(" END")
	}
	b.WriteString(" WHERE ")
	b.WriteString(s.heldBy(n, StateClaimed))
	b.WriteString(and)
	if returning {
		b.WriteString(" RETURNING id, barrier_id")
	}
	return b.String()
}

// qExtend moves the lease of n items of one token.
func (s *Store) qExtend(n int, returning bool) string {
	q := "UPDATE {items} SET lease_expires_at = {now+?} WHERE " + s.heldBy(n, StateClaimed)
	if returning {
		q += " RETURNING id, barrier_id"
	}
	return q
}

// qLost reads which of n items still hold a token.
func qLost(n int) string {
	return "SELECT id, barrier_id FROM {items} WHERE id IN (" + sqlkit.Placeholders(n) + ") AND claim_token = ? AND state IN ('claimed', 'completed', 'dead')"
}

// The reaper's conditions and assignments.
const (
	reapOrphan       = "NOT EXISTS (SELECT 1 FROM {processes} p WHERE p.id = {items}.claimed_by)"
	reapExpired      = "lease_expires_at < {now} AND EXISTS (SELECT 1 FROM {processes} p WHERE p.id = {items}.claimed_by)"
	reapCrashRetry   = "state = 'available', available_at = {now}, lease_expires_at = NULL, attempt = attempt - 1, crash_count = crash_count + 1, last_error = ?"
	reapCrashDead    = "state = 'dead', finished_at = {now}, lease_expires_at = NULL, crash_count = crash_count + 1, last_error = ?"
	reapTimeoutDead  = "state = 'dead', finished_at = {now}, lease_expires_at = NULL, last_error = ?"
	purgeBarrierGone = "fired_at IS NOT NULL AND fired_at < {now+?} AND NOT EXISTS (SELECT 1 FROM {items} j WHERE j.id = {barriers}.join_item_id AND j.state IN ('available', 'claimed')) AND " + purgeBarrierRunDone
	purgeItemGone    = "state IN ('completed', 'dead', 'cancelled') AND finished_at < {now+?} AND (barrier_id IS NULL OR NOT EXISTS (SELECT 1 FROM {barriers} b WHERE b.id = {items}.barrier_id)) AND " + purgeItemRunDone
)

// Retention keeps what a run that has not finished can still revive or
// resume, whatever its age: every item and barrier of a halted or waiting
// run (ReviveRun revives its dead items and re-arms the barriers they
// fired; a waiting run resumes where it stopped), and, in a running run,
// the dead items (which a partial revive, ReviveRunItem, leaves dead for
// a later ReviveRun) and the barriers whose join is dead (which that
// ReviveRun re-arms). Without it a run halted longer than the retention
// age lost the items a revive needed, and a revive that found nothing set
// it running with nothing to run. Once the run is completed or cancelled
// its items and barriers go by the other rules: at the next pass for
// those that finished (or fired) longer ago than the age. Each is one
// primary key probe of the runs table per row considered, in the same
// statement as the rest of the condition.
const (
	purgeItemRunDone    = "(run_id IS NULL OR NOT EXISTS (SELECT 1 FROM {runs} r WHERE r.id = {items}.run_id AND (r.state IN ('halted', 'waiting') OR (r.state = 'running' AND {items}.state = 'dead'))))"
	purgeBarrierRunDone = "(run_id IS NULL OR NOT EXISTS (SELECT 1 FROM {runs} r WHERE r.id = {barriers}.run_id AND (r.state IN ('halted', 'waiting') OR (r.state = 'running' AND EXISTS (SELECT 1 FROM {items} d WHERE d.id = {barriers}.join_item_id AND d.state = 'dead')))))"
)

// reapTimeoutRetry is the assignment that makes n timed-out items
// available again, each after its own backoff.
func reapTimeoutRetry(n int) string {
	var b strings.Builder
	b.WriteString("state = 'available', available_at = CASE id")
	for range n {
		b.WriteString(" WHEN ? THEN {now+?}")
	}
	b.WriteString(" END, lease_expires_at = NULL, last_error = ?")
	return b.String()
}

// qReapable lists up to n claimed items meeting cond.
func qReapable(d dialect.Dialect, cond string, n int) string {
	return "SELECT id, claim_token, barrier_id, crash_count, attempt, max_attempts, queue, flow_key FROM {items} WHERE state = 'claimed' AND " + cond + d.Limit(n)
}

// qUpdateIDs applies assign to n items.
func qUpdateIDs(assign string, n int) string {
	return "UPDATE {items} SET " + assign + " WHERE id IN (" + sqlkit.Placeholders(n) + ")"
}

// qReapLock locks n items in id order, as the reaper rereads them.
func qReapLock(n int) string {
	return "SELECT id, claim_token, barrier_id, crash_count, attempt, max_attempts, queue, flow_key, state, CASE WHEN lease_expires_at < {now} THEN 1 ELSE 0 END FROM {items} WHERE id IN (" + sqlkit.Placeholders(n) + ") ORDER BY id{lock}"
}

// qPurgeSelect reads up to n ids of table meeting cond, lowest order
// first when order is not empty.
func qPurgeSelect(d dialect.Dialect, table, cond, order string, n int) string {
	q := "SELECT id FROM " + table + " WHERE " + cond
	if order != "" {
		q += " ORDER BY " + order
	}
	return q + d.Limit(n)
}

// purgeItemRead is what retention's read of item ids asks (the delete
// checks purgeItemGone): finished_at is set exactly when an item reaches
// a terminal state and cleared when it is revived, so its range alone
// finds the finished items, and leaves the items_finished index the only
// one a planner can read them by. With the state test as well, SQLite
// without statistics reads the items_state index and sorts every
// finished item for the ORDER BY (4.5 s against 0.06 s for a batch of 500
// among 100,000, measured with the sqlite3 shell).
//
// It skips the items retention keeps for their run as the delete does:
// were they read, a pass would read the same kept items again and again,
// first in finished_at order, and delete nothing behind them.
const purgeItemRead = "finished_at < {now+?} AND (barrier_id IS NULL OR NOT EXISTS (SELECT 1 FROM {barriers} b WHERE b.id = {items}.barrier_id)) AND " + purgeItemRunDone

// purgeItemOrder is the order retention deletes items in, oldest finished
// first, along the items_finished index: a read that stops at its limit
// finds the oldest at the index's start, rather than scanning the table
// past the unfinished items and (on PostgreSQL, until a vacuum) past the
// dead rows of the batches deleted before.
const purgeItemOrder = "finished_at"

// qPurgeItems is the dialect's one statement (dialect.Purger) that deletes
// up to n items meeting purgeItemGone for age, oldest finished first, with
// their history, their tags and metadata, and their progress, and its
// arguments.
func (s *Store) qPurgeItems(n int, age int64) (string, []any) {
	q, args := s.purger.PurgeSQL(dialect.PurgeSpec{
		Table: s.names.Items, Key: "id",
		Cond: s.expand.Replace(purgeItemGone), CondArgs: []any{age},
		OrderBy: purgeItemOrder, Limit: n,
		Dependents: []dialect.PurgeDependent{{Table: s.names.Attempts, Key: "item_id"}, {Table: s.names.ItemMeta, Key: "item_id"}, {Table: s.names.Progress, Key: "item_id"}},
	})
	return s.sql(q), args
}

// qPurgeDelete deletes n rows of table that still meet cond.
func (s *Store) qPurgeDelete(table, cond string, n int) string {
	return "DELETE FROM " + table + " WHERE " + cond + " AND " + s.idsIn(n)
}

// Queues.
const (
	// queueUnpaused is the claim's filter on the queues table: a queue
	// with no row there is not paused. Uncorrelated, so that the database
	// reads it once per claim (one primary key lookup) before it walks the
	// items index.
	queueUnpaused = "NOT EXISTS (SELECT 1 FROM {queues} qs WHERE qs.name = ? AND qs.paused = ?)"
	// queueOpen is a queue's first row, for InsertIgnore.
	queueOpen      = "?, ?, {now}"
	qQueueSetPause = "UPDATE {queues} SET paused = ?, updated_at = {now} WHERE name = ?"
	qQueueList     = "SELECT name, CASE WHEN paused = ? THEN 1 ELSE 0 END, updated_at FROM {queues} ORDER BY name"
)

// queueOpenColumns are the columns a queue's first row is written with.
var queueOpenColumns = []string{"name", "paused", "updated_at"}

// queueConflict is the unique key of the queues table.
var queueConflict = []string{"name"}

// History.
const qAttemptsList = "SELECT n, outcome, error, ended_at FROM {attempts} WHERE item_id = ? ORDER BY n"

// qAttemptsInsert records one attempt for each of n items, numbered after
// the item's last recorded attempt. It runs under the lock of each item's
// row, in the transaction that changes the item's state, so no two can
// number the same item at once. The target table is read in the FROM
// clause, not a subquery, which MySQL allows. The error text is a bind in
// the SELECT list, an expression, so it is {text?}, bound with
// dialect.TextArg (on Oracle a long string bound plainly would travel as
// LONG, refused in an expression).
func qAttemptsInsert(n int) string {
	return "INSERT INTO {attempts} (item_id, n, outcome, error, ended_at)" +
		" SELECT i.id, COALESCE(MAX(a.n), 0) + 1, ?, {text?}, {now} FROM {items} i" +
		" LEFT JOIN {attempts} a ON a.item_id = i.id WHERE i.id IN (" + sqlkit.Placeholders(n) + ") GROUP BY i.id"
}

// qAttemptsOrphaned deletes the history of those of n items that no longer
// exist: those the same transaction purged, not one revived since the
// purge read it.
func (s *Store) qAttemptsOrphaned(n int) string {
	return "DELETE FROM {attempts} WHERE NOT EXISTS (SELECT 1 FROM {items} i WHERE i.id = {attempts}.item_id) AND " + s.columnIn("item_id", n)
}

// Schedules: EnqueueDue's watermark table. Its clock read is the store's
// (nowSQL).
const (
	// qScheduleRead reads a code-declared schedule's watermark; a
	// revision marks a name kept in the database (SetSchedule) instead.
	qScheduleRead = "SELECT last_tick, revision FROM {schedules} WHERE name = ?"
	// scheduleOpen is the row InsertIgnore writes for a schedule seen for
	// the first time (name, watermark).
	scheduleOpen = "?, ?, {now}"
	// qScheduleAdvance moves a watermark forward only from the value the
	// transaction read: of any number of processes that read it, one
	// moves it and enqueues the ticks in between.
	qScheduleAdvance = "UPDATE {schedules} SET last_tick = ?, updated_at = {now} WHERE name = ? AND last_tick = ?"
)

// scheduleOpenColumns are the columns a schedule's first row is written with.
var scheduleOpenColumns = []string{"name", "last_tick", "updated_at"}

// scheduleConflict is the unique key of the schedules table.
var scheduleConflict = []string{"name"}

// Schedules kept in the database (SetSchedule): rows of the schedules
// table with a revision. Every change to one moves its revision, which
// the watermark's compare-and-set compares too.
const (
	// storedScheduleColumns reads a stored schedule: its paused flag as 1
	// or 0, the first bind being the dialect's true.
	storedScheduleColumns = "name, last_tick, definition, CASE WHEN paused = ? THEN 1 ELSE 0 END, revision, created_at, updated_at"
	qStoredSchedules      = "SELECT " + storedScheduleColumns + " FROM {schedules} WHERE revision IS NOT NULL ORDER BY name"
	qStoredSchedule       = "SELECT " + storedScheduleColumns + " FROM {schedules} WHERE name = ?"
	// storedScheduleOpen is a stored schedule's first row, for
	// InsertIgnore (name, watermark, definition, paused).
	storedScheduleOpen = "?, ?, {text?}, ?, 1, {now}, {now}"
	// qStoredScheduleSet replaces a definition and its watermark, from
	// the revision and watermark read: a watermark moved in between by
	// a tick is never moved back.
	qStoredScheduleSet = "UPDATE {schedules} SET definition = {text?}, last_tick = ?, revision = revision + 1, updated_at = {now} WHERE name = ? AND revision = ? AND last_tick = ?"
	// qStoredSchedulePause pauses or resumes, from the revision and
	// watermark read.
	qStoredSchedulePause = "UPDATE {schedules} SET paused = ?, last_tick = ?, revision = revision + 1, updated_at = {now} WHERE name = ? AND revision = ? AND last_tick = ?"
	// qStoredScheduleDelete deletes a stored schedule, never a code
	// schedule's watermark.
	qStoredScheduleDelete = "DELETE FROM {schedules} WHERE name = ? AND revision IS NOT NULL"
	// qStoredScheduleAdvance moves a stored schedule's watermark from the
	// value and revision its transaction read.
	qStoredScheduleAdvance = "UPDATE {schedules} SET last_tick = ?, updated_at = {now} WHERE name = ? AND last_tick = ? AND revision = ?"
)

// storedScheduleOpenColumns are the columns of a stored schedule's first
// row.
var storedScheduleOpenColumns = []string{"name", "last_tick", "definition", "paused", "revision", "created_at", "updated_at"}
