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
)

// Halt is one halt of a run, as Config.OnHalt receives it.
type Halt struct {
	// ID identifies this halt: a run halted, revived and halted again has
	// two. Deduplicate OnHalt calls by it.
	ID       uuid.UUID
	Run      uuid.UUID
	Pipeline string
	// Step is the step whose failure halted the run ("" if none did), and
	// Item its item.
	Step   string
	Item   uuid.UUID
	Reason Reason
	// Detail says more: the step's last error, or what the reason is
	// about.
	Detail string
}

// notify delivers the halt that a halt item carries to Config.OnHalt,
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
	if n.Item != uuid.Nil {
		it, err := e.store.Get(ctx, n.Item)
		if err != nil && !errors.Is(err, core.ErrNotFound) {
			return err
		}
		var env envelope
		if err == nil && json.Unmarshal(it.Payload, &env) == nil {
			h.Step = env.Node
		}
	}
	return e.cfg.OnHalt(ctx, h)
}
