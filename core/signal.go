package core

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// SignalSpec describes a signal sent to a run.
type SignalSpec struct {
	// Run is the run the signal is for: required, and not finished.
	Run uuid.UUID
	// Name is what items of the run wait on (Fenced.Await): required, 1
	// to 128 characters.
	Name string
	// Key makes sending idempotent: a signal with the same Run, Name and
	// Key is stored once, however often it is sent. Required, 1 to 200
	// characters.
	Key string
	// Payload is a JSON document (or nil) under the rules of
	// ItemSpec.Payload.
	Payload json.RawMessage
}

// Signal is a signal as stored.
type Signal struct {
	ID      uuid.UUID
	Run     uuid.UUID
	Name    string
	Key     string
	Payload json.RawMessage
	// TakenBy is the item that took the signal (Fenced.Await), uuid.Nil
	// while it waits to be taken.
	TakenBy   uuid.UUID
	CreatedAt time.Time
	TakenAt   time.Time
}

// SignalSent is the outcome of Store.Signal.
type SignalSent struct {
	ID uuid.UUID
	// Existed is true when the signal (Run, Name, Key) was already stored:
	// nothing changed.
	Existed bool
	// Woken counts the items of the run that waited on Name and were
	// made claimable at once.
	Woken int
}

// Signal stores a signal for a run, once per (Run, Name, Key), and in the
// same transaction makes every item of the run that waits on Name
// (Fenced.Await) claimable at once; after the commit it wakes this
// process's subscribers of those items' queues, so a polling worker picks
// them up without waiting for its next poll. The signal is kept until an
// item takes it: one sent before anyone waits is there for the first
// waiter. A signal to a finished run is ErrRunFinished; to no run,
// ErrNotFound.
func (s *Store) Signal(ctx context.Context, spec SignalSpec) (SignalSent, error) {
	return SignalSent{}, errNotYet("Signal")
}

// AwaitParams say what a fenced item waits for.
type AwaitParams struct {
	// Name is the signal's name: required, 1 to 128 characters.
	Name string
	// Timeout bounds the wait, on the database clock, from the first
	// Await of this name by this item: 0 for none, else up to MaxDelay.
	// Later Awaits of the same name keep the first deadline.
	Timeout time.Duration
}

// AwaitResult is the outcome of Fenced.Await: exactly one of Signal,
// TimedOut and Waiting is set.
type AwaitResult struct {
	// Signal is the signal taken, exactly once: no other Await of any item
	// takes it (if the fence commits).
	Signal *Signal
	// TimedOut: no signal came before the deadline.
	TimedOut bool
	// Waiting: no signal yet. When the fence commits, the item gives its
	// claim back (its attempt is not counted) and waits: it is not
	// claimable until a signal of that name comes or the deadline passes.
	// The handler then stops without completing or failing the item (both
	// would find the claim lost); the item is claimed again later and its
	// handler calls Await again, which then returns the signal or the
	// timeout.
	Waiting bool
}

// Await takes an untaken signal named p.Name sent to the fenced item's run,
// if there is one (the oldest first), or else puts the item into waiting
// for one (see AwaitResult). The item must belong to a run.
//
// A waiting item is stored as an available item whose available_at is its
// deadline (or MaxDelay ahead without one), with the name it waits on:
// the claim's statement and index are those of every other item, so
// waiting costs the claim path nothing, and a deadline that passes makes
// the item claimable with no sweep. Item.Waiting reports it. A signal moves
// available_at to now.
//
// A waiter and a signal sender both lock the run's row before they look
// for each other, so neither can miss the other: a signal sent while the
// waiter's fence runs is found by it or wakes it.
func (f *Fenced) Await(ctx context.Context, p AwaitParams) (AwaitResult, error) {
	return AwaitResult{}, errNotYet("Await")
}

// Signals returns the signals sent to a run, in the order they were sent
// (at most 10,000).
func (s *Store) Signals(ctx context.Context, run uuid.UUID) ([]Signal, error) {
	return nil, errNotYet("Signals")
}
