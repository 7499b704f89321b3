package worker

import (
	"errors"
	"fmt"
	"time"
)

// Errors the worker reports.
var (
	// ErrStopped is the cause of a handler context cancelled by Stop once
	// its deadline passed, and what Start returns on a stopped worker.
	ErrStopped = errors.New("plenum/worker: stopped")
	// ErrDeadline is the cause of a handler context cancelled because the
	// item's deadline (its kind's Timeout, less the margin) passed.
	ErrDeadline = errors.New("plenum/worker: handler deadline passed")
	// ErrCancelled is the cause of a handler context cancelled because its
	// item was cancelled (core.Store.Cancel) or its claim lost otherwise.
	ErrCancelled = errors.New("plenum/worker: item cancelled or claim lost")
	// ErrLost is the cause of every handler context cancelled because the
	// worker lost its liveness (see Worker.Err), and what Err returns then.
	ErrLost = errors.New("plenum/worker: owner lost")
)

// ConfigError describes a Config or a registration the worker refused.
type ConfigError struct {
	// Field names the offending setting, e.g. "Queues[email].MaxWorkers".
	Field string
	// Reason says what is wrong with it.
	Reason string
}

// Error says which setting was refused and why.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("plenum/worker: invalid %s: %s", e.Field, e.Reason)
}

func configErr(field, format string, args ...any) error {
	return &ConfigError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// discardError marks an error that must not be retried.
type discardError struct{ err error }

func (e *discardError) Error() string { return "discarded: " + e.err.Error() }
func (e *discardError) Unwrap() error { return e.err }

// Discard wraps err so that the item is dead-lettered at once, whatever
// attempts it has left: for input that can never succeed. A nil err gives
// a generic reason.
func Discard(err error) error {
	if err == nil {
		err = errors.New("discarded by its handler")
	}
	return &discardError{err: err}
}

// SnoozeError is what Snooze returns: the item goes back for After without
// using an attempt.
type SnoozeError struct {
	// After is how long the item waits before it can be claimed again,
	// counted on the database clock.
	After time.Duration
}

func (e *SnoozeError) Error() string { return fmt.Sprintf("snoozed for %v", e.After) }

// Snooze returns an error that gives the item back to run again after d
// (0 for at once), without using an attempt: for work that is not ready
// yet. A negative d counts as 0.
func Snooze(d time.Duration) error {
	return &SnoozeError{After: max(0, d)}
}

// PanicError is the error a recovered handler panic becomes; its text,
// with the stack, is what the failed attempt records.
type PanicError struct {
	// Value is what the handler panicked with.
	Value any
	// Stack is the goroutine's stack at the panic.
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v\n\n%s", e.Value, e.Stack) }
