package core

import (
	"context"

	"github.com/google/uuid"
)

// HaltParams describe a halt asked for by a fenced item.
type HaltParams struct {
	// Reason is required: 1 to 64 characters (max_fanout_exceeded,
	// no_route, ...).
	Reason string
	// Detail is free text stored with the halt.
	Detail string
	// Error is the text of the item's failed attempt, recorded in its
	// history; default Reason.
	Error string
}

// Halted is the outcome of Fenced.Halt.
type Halted struct {
	// HaltID identifies the halt (uuid.Nil when the run was not running
	// or waiting, and so did not halt).
	HaltID uuid.UUID
}

// Halt fails the fenced item dead (its attempt recorded with p.Error,
// counted as a failure at its barrier) and halts its run with p.Reason, in
// the fence's transaction, enqueuing the run's HaltItem there too. Reviving
// the run (ReviveRun) runs the item again. The item must belong to a run.
//
// Independently of Halt, an item of a run that dies (its attempts used up
// by Fail or by expired leases, failed with Discard, or dead after too
// many crashes) halts its run in the transaction where it dies, with
// HaltAttemptsExhausted or HaltCrashesExhausted.
func (f *Fenced) Halt(ctx context.Context, p HaltParams) (Halted, error) {
	return Halted{}, errNotYet("Halt")
}
