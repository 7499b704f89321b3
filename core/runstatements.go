package core

import (
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
)

// Runs, signals and waiting (schema version 3; a run's version, 14). See statements.go for how
// templates are written and catalogued.
const (
	runColumns = "id, name, unique_key, state, input, output, halt_reason, halt_detail, halt_id, halt_item_id, halt_queue, halt_kind, created_at, updated_at, finished_at, version"
	// runOpen is a new run's row, for InsertIgnore on (name, unique_key).
	runOpen          = "?, ?, ?, 'running', {json?}, ?, ?, {now}, {now}, ?"
	qRunGet          = "SELECT " + runColumns + " FROM {runs} WHERE id = ?"
	qRunByKey        = "SELECT id FROM {runs} WHERE name = ? AND unique_key = ?"
	qRunLock         = "SELECT state, halt_queue, halt_kind FROM {runs} WHERE id = ?{lock}"
	qRunComplete     = "UPDATE {runs} SET state = 'completed', output = {json?}, updated_at = {now}, finished_at = {now} WHERE id = ?"
	qRunHalt         = "UPDATE {runs} SET state = 'halted', halt_reason = ?, halt_detail = ?, halt_id = ?, halt_item_id = ?, updated_at = {now} WHERE id = ?"
	qRunResume       = "UPDATE {runs} SET state = ?, halt_reason = NULL, halt_detail = NULL, halt_id = NULL, halt_item_id = NULL, updated_at = {now} WHERE id = ?"
	qRunCancel       = "UPDATE {runs} SET state = 'cancelled', updated_at = {now}, finished_at = {now} WHERE id = ?"
	qItemRun         = "SELECT run_id FROM {items} WHERE id = ?"
	qItemWait        = "SELECT wait_name, wait_until, CASE WHEN wait_until <= {now} THEN 1 ELSE 0 END FROM {items} WHERE id = ?"
	qItemWaitClear   = "UPDATE {items} SET wait_name = NULL, wait_until = NULL WHERE id = ?"
	signalColumns    = "id, run_id, name, unique_key, payload, taken_by, created_at, taken_at"
	signalOpen       = "?, ?, ?, ?, {json?}, {now}"
	qSignalByKey     = "SELECT id FROM {signals} WHERE run_id = ? AND name = ? AND unique_key = ?"
	qSignalsUntaken  = "SELECT " + signalColumns + " FROM {signals} WHERE run_id = ? AND name = ? AND taken_by IS NULL ORDER BY created_at, id{lock}"
	qSignalTake      = "UPDATE {signals} SET taken_by = ?, taken_at = {now} WHERE id = ? AND taken_by IS NULL"
	qWaiters         = "SELECT id, queue FROM {items} WHERE run_id = ? AND wait_name = ? AND state = 'available'"
	qAwaitDeadline   = "UPDATE {items} SET state = 'available', available_at = {now+?}, lease_expires_at = NULL, attempt = attempt - 1, wait_name = ?, wait_until = {now+?} WHERE id = ?"
	qAwaitNoDeadline = "UPDATE {items} SET state = 'available', available_at = {now+?}, lease_expires_at = NULL, attempt = attempt - 1, wait_name = ?, wait_until = NULL WHERE id = ?"
	qAwaitAgain      = "UPDATE {items} SET state = 'available', available_at = wait_until, lease_expires_at = NULL, attempt = attempt - 1 WHERE id = ?"
)

// runOpenColumns are the columns a new run is written with.
var runOpenColumns = []string{"id", "name", "unique_key", "state", "input", "halt_queue", "halt_kind", "created_at", "updated_at", "version"}

// runConflict is the unique key of runs.
var runConflict = []string{"name", "unique_key"}

// signalOpenColumns are the columns a new signal is written with.
var signalOpenColumns = []string{"id", "run_id", "name", "unique_key", "payload", "created_at"}

// signalConflict is the unique key of signals.
var signalConflict = []string{"run_id", "name", "unique_key"}

// qSignalsOfRun lists up to n signals of a run, oldest first.
func qSignalsOfRun(d dialect.Dialect, n int) string {
	return "SELECT " + signalColumns + " FROM {signals} WHERE run_id = ? ORDER BY created_at, id" + d.Limit(n)
}

// qWake makes n waiting items claimable now, those still waiting on the
// name.
func qWake(n int) string {
	return "UPDATE {items} SET available_at = {now} WHERE id IN (" + sqlkit.Placeholders(n) + ") AND state = 'available' AND wait_name = ?"
}

// qRunOfItems lists the runs of those of n items that belong to one.
func qRunOfItems(n int) string {
	return "SELECT run_id, id FROM {items} WHERE id IN (" + sqlkit.Placeholders(n) + ") AND run_id IS NOT NULL ORDER BY id"
}

func (s *Store) runOpenSQL() string {
	return s.d.InsertIgnore(s.names.Runs, runOpenColumns, s.expand.Replace(runOpen), 1, runConflict)
}

func (s *Store) signalOpenSQL() string {
	return s.d.InsertIgnore(s.names.Signals, signalOpenColumns, s.expand.Replace(signalOpen), 1, signalConflict)
}

// Cancel and revive by run, and re-arming a fired barrier.
const (
	itemCancelSet      = "state = 'cancelled', claim_token = NULL, lease_expires_at = NULL, finished_at = {now}"
	qReviveLockBarrier = "SELECT fired_at, join_item_id, run_id FROM {barriers} WHERE id = ?{lock}"
	qReviveChildren    = "UPDATE {items} SET state = 'available', available_at = {now}, attempt = 0, crash_count = 0, finished_at = NULL, lease_expires_at = NULL WHERE barrier_id = ? AND state IN ('dead', 'cancelled')"
	qBarrierRearm      = "UPDATE {barriers} SET fired_at = NULL, join_item_id = NULL, failed = failed - ?, generation = COALESCE(generation, 0) + 1 WHERE id = ?"
	qDeadOfRun         = "SELECT i.id, i.barrier_id, i.join_barrier_id, b.join_item_id FROM {items} i LEFT JOIN {barriers} b ON b.id = i.join_barrier_id WHERE i.id = ? AND i.state = 'dead'"
	qBarrierFiredAt    = "SELECT CASE WHEN fired_at IS NULL THEN 0 ELSE 1 END, failed FROM {barriers} WHERE id = ?{lock}"
)

// qUnfinishedOfRun is one page of n unfinished items of a run.
func qUnfinishedOfRun(d dialect.Dialect, n int) string {
	return "SELECT id FROM {items} WHERE run_id = ? AND state IN ('available', 'claimed') ORDER BY id" + d.Limit(n)
}

// qDeadPageOfRun is one page of n dead items of a run after an id.
func qDeadPageOfRun(d dialect.Dialect, n int) string {
	return "SELECT id FROM {items} WHERE run_id = ? AND state = 'dead' AND id > ? ORDER BY id" + d.Limit(n)
}

// qLockUnfinished locks those of n items still unfinished, in id order.
func qLockUnfinished(n int) string {
	return "SELECT id, barrier_id FROM {items} WHERE id IN (" + sqlkit.Placeholders(n) + ") AND state IN ('available', 'claimed') ORDER BY id{lock}"
}
