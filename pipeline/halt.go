package pipeline

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
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
	ID       uuid.UUID `json:"id"`
	Run      uuid.UUID `json:"run"`
	Pipeline string    `json:"pipeline"`
	// Step is the step whose failure halted the run.
	Step   string `json:"step"`
	Reason Reason `json:"reason"`
	// Error is the step's last error, or what the reason is about.
	Error string `json:"error"`
	// At is when the halting step's handler began the halt (the
	// handler's clock: for display only).
	At time.Time `json:"at"`
}

// notify delivers the halt that a notice item carries to Config.OnHalt,
// outside any transaction; an error makes the notice run again.
func (e *Engine) notify(ctx context.Context, env envelope) error {
	if e.cfg.OnHalt == nil {
		return nil
	}
	var h Halt
	if err := json.Unmarshal(env.In, &h); err != nil {
		return err
	}
	return e.cfg.OnHalt(ctx, h)
}
