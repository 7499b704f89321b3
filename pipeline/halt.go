package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
)

// Reason says why a run halted.
type Reason string

// The reasons a run halts for.
const (
	// ReasonAttemptsExhausted: a step failed its last attempt, or
	// returned a Permanent error.
	ReasonAttemptsExhausted Reason = "attempts_exhausted"
	// ReasonCrashesExhausted: the workers running a step died
	// Options.MaxCrashes times.
	ReasonCrashesExhausted Reason = "crashes_exhausted"
	// ReasonMaxFanoutExceeded: an expand's source gave more elements than
	// its cap; the children already made were cancelled.
	ReasonMaxFanoutExceeded Reason = "max_fanout_exceeded"
	// ReasonNoRouteMatched: a route's choice named no route.
	ReasonNoRouteMatched Reason = "no_route_matched"
	// ReasonInvalidDefinition: an item names a step that the registered
	// definition does not have (the definition changed under a running
	// run), or its input does not decode.
	ReasonInvalidDefinition Reason = "invalid_definition"
	// ReasonBranchFailed: a fan-out's child ended without an output (dead
	// or cancelled outside the pipeline), so its join cannot run.
	ReasonBranchFailed Reason = "branch_failed"
	// ReasonWaitTimedOut: a WaitUntil's condition did not hold within its
	// timeout, and it had no flow to take instead.
	ReasonWaitTimedOut Reason = "wait_timed_out"
	// ReasonVersionNotRegistered: a step of a run is due, and the
	// version of the pipeline's definition the run started on
	// (Options.Version) is not registered with the engine that claimed
	// it. The step did not run; the run revives once that version is
	// registered again.
	ReasonVersionNotRegistered Reason = "version_not_registered"
)

// Halt is one halt of a run, as EngineOptions.OnHalt receives it and as
// Engine.Get shows it while the run is halted: the same fields, from the
// same record.
type Halt struct {
	// ID identifies this halt: a run halted, revived and halted again has
	// two. Deduplicate OnHalt calls by it.
	ID       uuid.UUID
	Run      uuid.UUID
	Pipeline string
	// Step is the step whose failure halted the run ("" if none did), and
	// Item its item. Step is read from the item, which retention keeps
	// while the run is halted.
	Step   string
	Item   uuid.UUID
	Reason Reason
	// Detail says more: the step's last error (for
	// ReasonAttemptsExhausted, whether the step returned a Permanent or a
	// plain error; for ReasonCrashesExhausted, the reaper's), or what the
	// reason is about.
	Detail string
}

// notify delivers the halt that a halt item carries to EngineOptions.OnHalt,
// outside any transaction (after the halt committed); an error makes the
// item run again after a backoff.
func (e *Engine) notify(ctx context.Context, job *worker.Job[json.RawMessage]) error {
	var n core.HaltNotice
	if err := json.Unmarshal(job.Args, &n); err != nil {
		return worker.Discard(fmt.Errorf("plenum/pipeline: halt item %s: %w", job.ID(), err))
	}
	if e.cfg.OnHalt == nil {
		return nil
	}
	h := Halt{ID: n.HaltID, Run: n.Run, Item: n.Item, Reason: Reason(n.Reason), Detail: n.Detail}
	if r, err := e.store.GetRun(ctx, n.Run); err == nil {
		h.Pipeline = r.Name
	} else if !errors.Is(err, core.ErrNotFound) {
		return err
	}
	step, err := e.stepOf(ctx, n.Item)
	if err != nil {
		return err
	}
	h.Step = step
	return e.cfg.OnHalt(ctx, h)
}

// storedHalt is the halt of run r, which is halted, as its row holds it:
// the Halt that OnHalt received for the same id.
func (e *Engine) storedHalt(ctx context.Context, r core.Run) (*Halt, error) {
	step, err := e.stepOf(ctx, r.HaltItemID)
	if err != nil {
		return nil, err
	}
	return &Halt{ID: r.HaltID, Run: r.ID, Pipeline: r.Name, Step: step, Item: r.HaltItemID,
		Reason: Reason(r.HaltReason), Detail: r.HaltDetail}, nil
}

// stepOf is the step that item runs: "" for uuid.Nil, for an item that is
// gone, and for one that is not a pipeline's.
func (e *Engine) stepOf(ctx context.Context, item uuid.UUID) (string, error) {
	if item == uuid.Nil {
		return "", nil
	}
	it, err := e.store.Get(ctx, item)
	if errors.Is(err, core.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("plenum/pipeline: the item %s that halted its run: %w", item, err)
	}
	var env envelope
	if json.Unmarshal(it.Payload, &env) != nil {
		return "", nil
	}
	return env.Node, nil
}
