package core

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
)

// RunState is where a run is in its life.
type RunState string

// The states of a run. Completed and Cancelled are final; a halted run can
// be revived (ReviveRun).
const (
	// RunRunning: the run's items are being worked on.
	RunRunning RunState = "running"
	// RunWaiting: the run waits for something outside it (a signal). The
	// core never sets it by itself: it is the caller's to set and clear
	// (UpdateRun), and a run that waits can halt, finish or be cancelled
	// as a running one can.
	RunWaiting RunState = "waiting"
	// RunHalted: the run stopped on a failure (HaltReason says which)
	// and waits for ReviveRun or CancelRun.
	RunHalted RunState = "halted"
	// RunCompleted: the run finished with its Output.
	RunCompleted RunState = "completed"
	// RunCancelled: the run was cancelled (CancelRun).
	RunCancelled RunState = "cancelled"
)

// Final reports whether s is a state a run never leaves.
func (s RunState) Final() bool { return s == RunCompleted || s == RunCancelled }

// The halt reasons the core writes by itself, when an item of a run dies.
// Callers halting a run (Fenced.Halt, UpdateRun) give their own.
const (
	// HaltAttemptsExhausted: an item of the run failed its last attempt
	// (Fail, or a lease that expired on its last attempt), or was failed
	// with Discard.
	HaltAttemptsExhausted = "attempts_exhausted"
	// HaltCrashesExhausted: an item of the run crashed its workers more
	// often than the reaper allows.
	HaltCrashesExhausted = "crashes_exhausted"
)

// HaltItem is the item a run enqueues, in the same transaction, each time
// it halts: the way to hear of a halt that cannot be lost to a crash (a
// hook called after the commit could be). Its payload is a HaltNotice; its
// key is "halt/" and the halt's id, so it is enqueued once per halt.
type HaltItem struct {
	// Queue is required: 1 to 128 characters.
	Queue string
	// Kind may be empty.
	Kind string
}

// HaltNotice is the payload of a run's HaltItem.
type HaltNotice struct {
	Run    uuid.UUID `json:"run"`
	HaltID uuid.UUID `json:"halt_id"`
	Reason string    `json:"reason"`
	Detail string    `json:"detail,omitempty"`
	// Item is the item whose death halted the run (uuid.Nil when a halt
	// was asked for through UpdateRun).
	Item uuid.UUID `json:"item"`
}

// RunSpec describes a run to create.
type RunSpec struct {
	// Name names what runs (a pipeline's name): required, 1 to 128
	// characters.
	Name string
	// Key, when not empty, makes creating the run idempotent: a run with
	// the same Name and Key that already exists is returned instead of a
	// new one, and nothing is enqueued. Up to 200 characters.
	Key string
	// Input is the run's input, a JSON document (or nil) under the rules
	// of ItemSpec.Payload.
	Input json.RawMessage
	// OnHalt, when set, is enqueued each time the run halts.
	OnHalt *HaltItem
}

// Run is a run as stored. A zero time or uuid.Nil stands for NULL.
type Run struct {
	ID     uuid.UUID
	Name   string
	Key    string
	State  RunState
	Input  json.RawMessage
	Output json.RawMessage
	// HaltReason, HaltDetail and HaltID describe the latest halt while the
	// run is halted; reviving the run clears them. Each halt has its own
	// HaltID.
	HaltReason string
	HaltDetail string
	HaltID     uuid.UUID
	// HaltItem is the run's OnHalt, or nil.
	HaltItem   *HaltItem
	CreatedAt  time.Time
	UpdatedAt  time.Time
	FinishedAt time.Time
}

// RunCreated is the outcome of creating a run.
type RunCreated struct {
	ID uuid.UUID
	// Existed is true when a run with the same Name and Key already
	// existed: ID is then that run's, and nothing was enqueued.
	Existed bool
}

// CreateRun creates a run and enqueues its first items in one transaction.
// Each of first belongs to the new run (its Run field is set). With a Key
// that an existing run has, it changes nothing and returns that run.
func (s *Store) CreateRun(ctx context.Context, spec RunSpec, first ...ItemSpec) (RunCreated, []Enqueued, error) {
	return RunCreated{}, nil, errNotYet("CreateRun")
}

// CreateRunTx is CreateRun inside the caller's own transaction: the run and
// its first items exist if and only if the caller's transaction commits, so
// that a caller can create a run exactly once together with its own writes.
// There is no retry, and no wake-up in this process (see EnqueueTx).
func (s *Store) CreateRunTx(ctx context.Context, tx dialect.Querier, spec RunSpec, first ...ItemSpec) (RunCreated, []Enqueued, error) {
	return RunCreated{}, nil, errNotYet("CreateRunTx")
}

// GetRun returns the run with the given id, or ErrNotFound.
func (s *Store) GetRun(ctx context.Context, id uuid.UUID) (Run, error) {
	return Run{}, errNotYet("GetRun")
}

// RunItemsParams page through the items of a run.
type RunItemsParams struct {
	Run uuid.UUID
	// After is the last id of the previous page; uuid.Nil for the first.
	After uuid.UUID
	// Limit is the page size: 1 to 10,000.
	Limit int
}

// RunItems returns one page of the items of a run in id order (which is
// creation order: ids are UUIDv7), a keyset page whose cost does not grow
// with how far in it is.
func (s *Store) RunItems(ctx context.Context, p RunItemsParams) ([]Item, error) {
	return nil, errNotYet("RunItems")
}

// RunUpdate is a compare-and-set of a run's state.
type RunUpdate struct {
	Run uuid.UUID
	// From lists the states the run may be in for the update to happen:
	// required.
	From []RunState
	// To is the new state.
	To RunState
	// Output is stored when To is RunCompleted.
	Output json.RawMessage
	// HaltReason (required when To is RunHalted, up to 64 characters) and
	// HaltDetail (free text) are stored when To is RunHalted; the halt gets
	// a new HaltID and the run's HaltItem is enqueued. Moving a run to
	// RunRunning clears them.
	HaltReason string
	HaltDetail string
}

// UpdateRun moves a run from one of u.From to u.To in one conditional
// update, and reports whether it did (false, with the run as it is, when
// its state was not one of u.From). A run in a final state never moves.
func (s *Store) UpdateRun(ctx context.Context, u RunUpdate) (Run, bool, error) {
	return Run{}, false, errNotYet("UpdateRun")
}

// UpdateRun is Store.UpdateRun in the fence's transaction: the run moves
// only if the fence commits, together with what else the fence wrote.
func (f *Fenced) UpdateRun(ctx context.Context, u RunUpdate) (Run, bool, error) {
	return Run{}, false, errNotYet("Fenced.UpdateRun")
}
