package core

import (
	"errors"
	"fmt"
)

// Sentinel errors. Match them with errors.Is; the errors the store returns
// wrap them with the operation and the item.
var (
	// ErrClaimLost means the claim the caller holds is no longer the item's
	// current claim: the item was reaped and claimed again, cancelled, or
	// finished by someone else. It is the expected outcome of a race, not a
	// failure, and the operation that returned it changed nothing.
	ErrClaimLost = errors.New("plenum: claim lost")

	// ErrPastDeadline means a write under a claim that carries a deadline
	// (Claim.Within) came after it, on the database clock: the claim is
	// still held, but its holder is too late to write through it, and the
	// operation that returned it changed nothing.
	ErrPastDeadline = errors.New("plenum: past the claim's deadline")

	// ErrOwnerLost means the owner was reaped (its heartbeat went stale).
	// Its claims have been or will be released; it must stop working on
	// them and register again to go on.
	ErrOwnerLost = errors.New("plenum: owner lost")

	// ErrCommitUnknown means the connection broke while a transaction was
	// committing: it may or may not have committed. The store does not retry
	// it blindly. Completing again with the same claim is safe: a completion
	// that did commit is recognised by its token.
	ErrCommitUnknown = errors.New("plenum: commit outcome unknown")

	// ErrNotFound means no item (or barrier) has the given id.
	ErrNotFound = errors.New("plenum: not found")

	// ErrInvalidInput is matched by every *InputError.
	ErrInvalidInput = errors.New("plenum: invalid input")

	// ErrClosed means the database handle was closed.
	ErrClosed = errors.New("plenum: database is closed")

	// ErrSchemaOutdated means the database's Plenum schema is older than
	// this build needs: run migrations (Options.Migrate, migrations.Apply,
	// "plenum migrate up", or the generated files).
	ErrSchemaOutdated = errors.New("plenum: schema is not up to date")

	// ErrNoTables means there are no Plenum tables at all under the
	// prefix: a Prefix other than the one the tables were made with, or a
	// new database opened without Options.Migrate. It matches
	// ErrSchemaOutdated too (version 0 is older than any build needs).
	ErrNoTables = errors.New("plenum: no Plenum tables")

	// ErrMisconfigured means the connection lacks a setting the dialect
	// depends on (SQLite without WAL, MySQL without parseTime, a
	// PostgreSQL search_path naming no schema, ...): the dialect's Check
	// refused it. Every such error is a *SettingError naming the setting.
	ErrMisconfigured = errors.New("plenum: connection misconfigured")

	// ErrFinished means the item is already in a terminal state
	// (completed, dead or cancelled) that the operation cannot leave.
	ErrFinished = errors.New("plenum: item already finished")

	// ErrNotDead means Revive was asked for an item that is not dead.
	ErrNotDead = errors.New("plenum: item is not dead")

	// ErrBarrierSealed means children were added to a sealed barrier.
	ErrBarrierSealed = errors.New("plenum: barrier is sealed")

	// ErrCursorMoved means a dispatch batch expected the barrier's cursor
	// to be somewhere it is not: another dispatch of the same barrier ran.
	ErrCursorMoved = errors.New("plenum: dispatch cursor moved")

	// ErrRunFinished means the run is completed or cancelled, which the
	// operation cannot change (a signal to it, a revive of it).
	ErrRunFinished = errors.New("plenum: run already finished")

	// ErrNotFired means ReviveBarrier was asked for a barrier that has not
	// fired: its dead children are revived with Revive, one by one.
	ErrNotFired = errors.New("plenum: barrier has not fired")

	// ErrNothingToRevive means ReviveRun was asked for a halted run that
	// has no dead item to revive and no item left to run (its items
	// deleted by a retention that did not keep them, or a run halted
	// through UpdateRun with nothing enqueued): it stays halted, since it
	// would otherwise be running for ever with nothing to run. Cancel it
	// (CancelRun), or enqueue what it should run and move it with
	// UpdateRun.
	ErrNothingToRevive = errors.New("plenum: run has nothing to revive")

	// ErrInsideFence means a store method that runs its own transaction was
	// called with the context a Fence passed to its function (or one derived
	// from it), on the database the fence holds a transaction on. Such a call
	// would wait on the fence's own row lock (or, on SQLite, on the one writer
	// the fence is) until a lock timeout, if ever: inside a fence, use the
	// Fenced handle instead.
	ErrInsideFence = errors.New("plenum: store called inside a fence: use the Fenced handle")

	// ErrKeyConflict means a child of a barrier could not be added because the
	// row that holds its stored key (the barrier's id, a slash, the child's
	// key) in its queue is not a child of that barrier. Callers cannot make
	// such rows (keys of that form are refused at enqueue); one can only come
	// from outside the store, or from before the form was reserved. Nothing
	// of the batch was added.
	ErrKeyConflict = errors.New("plenum: child key held by another item")
	// ErrRunContextFull is matched by the *InputError of a write to a
	// run's context that would take it past MaxRunContextKeys keys or
	// MaxRunContextBytes bytes (Fenced.SetRunContext). Nothing was
	// written.
	ErrRunContextFull = errors.New("plenum: run context full")
)

// InputError describes input the store refused before touching the
// database. errors.Is(err, ErrInvalidInput) matches it.
type InputError struct {
	// Field names the offending input, e.g. "Queue" or "Payload".
	Field string
	// Reason says what is wrong with it.
	Reason string
	// Err is the refusal Reason was made from, when another package made
	// it (a *cron.Error for a schedule's Cron), for errors.As; else nil.
	Err error
}

// Error says which input was refused and why.
func (e *InputError) Error() string {
	return fmt.Sprintf("plenum: invalid %s: %s", e.Field, e.Reason)
}

// Unwrap returns Err.
func (e *InputError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrInvalidInput) true.
func (e *InputError) Is(target error) bool { return target == ErrInvalidInput }

func invalid(field, format string, args ...any) error {
	return &InputError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// noTablesError is Open's error where the prefix has no tables: it asks
// first whether the prefix is right, since migrating would make a second
// set of tables beside the ones the caller meant.
type noTablesError struct {
	prefix, dialect string
}

func (e *noTablesError) Error() string {
	return fmt.Sprintf("plenum: no Plenum tables under prefix %s (is Prefix right?); for a new database, create them with "+
		"core.Options{Migrate: true}, \"plenum migrate up --dialect %s --dsn DSN --prefix %s\", or migrations.Apply", e.prefix, e.dialect, e.prefix)
}

// Is makes errors.Is(err, ErrNoTables) and errors.Is(err,
// ErrSchemaOutdated) true.
func (e *noTablesError) Is(target error) bool {
	return target == ErrNoTables || target == ErrSchemaOutdated
}

// SettingError is a connection the dialect's Check refused: a setting the
// dialect depends on is missing or wrong, and Err, the dialect's own
// words, names it and says how to set it. errors.Is(err, ErrMisconfigured)
// matches it. A database error while checking (a connection lost, a
// deadlock) is not a SettingError: it is returned as the database error it
// is.
type SettingError struct {
	// Dialect is the dialect's name.
	Dialect string
	// Err is the dialect's refusal.
	Err error
}

// Error says which dialect refused the connection and why.
func (e *SettingError) Error() string {
	return fmt.Sprintf("plenum: open: the %s connection lacks a setting the dialect needs: %v", e.Dialect, e.Err)
}

// Unwrap returns the dialect's refusal.
func (e *SettingError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrMisconfigured) true.
func (e *SettingError) Is(target error) bool { return target == ErrMisconfigured }
