package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
)

// State is where a run, or one of its steps, is.
type State string

// The states of runs and steps.
const (
	// Running: a run with steps to do; a step that waits to be claimed
	// (Pending) or runs (Running).
	StateRunning State = "running"
	// StatePending: a step not claimed yet.
	StatePending State = "pending"
	// StateWaiting: a run with a step waiting for a signal, and that step.
	StateWaiting State = "waiting"
	// StateHalted: a run stopped by a failure, until Revive.
	StateHalted State = "halted"
	// StateCompleted: a run or step that finished with its output.
	StateCompleted State = "completed"
	// StateFailed: a step that used up its attempts (or crashed too
	// often), or was halted: its run halted.
	StateFailed State = "failed"
	// StateCancelled: a cancelled run, or a step of one.
	StateCancelled State = "cancelled"
)

// Run is a run as Get shows it.
type Run struct {
	ID       uuid.UUID
	Pipeline string
	// Version is the version of the pipeline's definition the run
	// started on, and runs on (Options.Version): 1 for the runs
	// triggered before versions were.
	Version int
	State   State
	Input   json.RawMessage
	// Output is the run's, once completed.
	Output json.RawMessage
	// Halt is the latest halt, while the run is halted: the one that
	// EngineOptions.OnHalt receives, field for field.
	Halt *Halt
	// Context is the run's context (SetRunContext), each key with its
	// value and the item of the step that wrote it.
	Context []core.RunContextEntry
	// Steps are the run's step executions, in the order they were made.
	Steps                            []StepRun
	CreatedAt, UpdatedAt, FinishedAt time.Time
}

// StepRun is one execution of a step in a run.
type StepRun struct {
	Step string
	// Role is "" for the step itself, "collapse" or "combine" for the
	// fan-in of an expand or a divide.
	Role string
	// Path is the positions of the fan-outs the execution is inside,
	// from the root: "" at the top, "3.1" for the second branch inside
	// the fourth element.
	Path  string
	Item  uuid.UUID
	State State
	// Attempt counts the runs of the step so far; Attempts are the ones
	// that failed, with their errors, oldest first.
	Attempt  int
	Attempts []core.Attempt
	// Crashes counts the times its worker died running it.
	Crashes int
	Input   json.RawMessage
	Output  json.RawMessage
	// Error is the last failure's error.
	Error string
	// CreatedAt is when the step was made, StartedAt when it was last
	// claimed, FinishedAt when it ended.
	CreatedAt, StartedAt, FinishedAt time.Time
}

// Get returns run with every step it made (read in pages; a run of a
// million steps is a million rows).
func (e *Engine) Get(ctx context.Context, run uuid.UUID) (Run, error) {
	r, err := e.store.GetRun(ctx, run)
	if err != nil {
		return Run{}, fmt.Errorf("plenum/pipeline: get run %s: %w", run, err)
	}
	out := Run{ID: r.ID, Pipeline: r.Name, Version: max(r.Version, 1), State: State(r.State),
		Input: e.shown(sealAAD(r.Name, sealInput), r.Input), Output: e.shown(sealAAD(r.Name, sealOutput), r.Output),
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, FinishedAt: r.FinishedAt}
	if r.State == core.RunHalted {
		if out.Halt, err = e.storedHalt(ctx, r); err != nil {
			return Run{}, err
		}
	}
	if out.Context, err = e.store.RunContext(ctx, run); err != nil {
		return Run{}, fmt.Errorf("plenum/pipeline: get run %s: %w", run, err)
	}
	for i, c := range out.Context {
		out.Context[i].Value = e.shown(sealAAD(r.Name, sealContext+":"+c.Key), c.Value)
	}
	waiting := false
	after := uuid.Nil
	for {
		items, err := e.store.RunItems(ctx, core.RunItemsParams{Run: run, After: after, Limit: resultsPage})
		if err != nil {
			return Run{}, fmt.Errorf("plenum/pipeline: get run %s: %w", run, err)
		}
		for _, it := range items {
			if it.Kind == haltKind {
				continue
			}
			s, err := e.stepRun(ctx, r.Name, it)
			if err != nil {
				return Run{}, err
			}
			waiting = waiting || s.State == StateWaiting
			out.Steps = append(out.Steps, s)
		}
		if len(items) < resultsPage {
			break
		}
		after = items[len(items)-1].ID
	}
	if out.State == StateRunning && waiting {
		out.State = StateWaiting
	}
	return out, nil
}

// stepRun reads one item as a step's execution.
func (e *Engine) stepRun(ctx context.Context, name string, it core.Item) (StepRun, error) {
	var env envelope
	_ = json.Unmarshal(it.Payload, &env) // a foreign item shows with its id only
	s := StepRun{Step: env.Node, Role: string(env.Role), Path: env.Path, Item: it.ID, Attempt: it.Attempt, Crashes: it.CrashCount,
		Input: e.shown(sealAAD(name, sealIn), env.In), Output: e.shown(sealAAD(name, sealOut), it.Result), Error: it.LastError,
		CreatedAt: it.CreatedAt, StartedAt: it.ClaimedAt, FinishedAt: it.FinishedAt}
	switch {
	case it.Waiting():
		s.State = StateWaiting
	case it.State == core.StateAvailable:
		s.State = StatePending
	case it.State == core.StateClaimed:
		s.State = StateRunning
	case it.State == core.StateCompleted:
		s.State = StateCompleted
	case it.State == core.StateDead:
		s.State = StateFailed
	case it.State == core.StateCancelled:
		s.State = StateCancelled
	}
	if it.LastError != "" || it.Attempt > 1 || it.CrashCount > 0 {
		// Only an item that failed has history to read.
		a, err := e.store.Attempts(ctx, it.ID)
		if err != nil {
			return StepRun{}, fmt.Errorf("plenum/pipeline: history of step %q (%s): %w", env.Node, it.ID, err)
		}
		s.Attempts = a
	}
	return s, nil
}

// waitPoll is how often Wait reads the run.
const waitPoll = 50 * time.Millisecond

// Wait returns run as Get shows it once it has stopped: completed,
// halted or cancelled (a run that waits for a signal has not stopped). It
// reads the run's row every 50 ms until then, or until ctx ends.
func (e *Engine) Wait(ctx context.Context, run uuid.UUID) (Run, error) {
	t := time.NewTicker(waitPoll)
	defer t.Stop()
	for {
		r, err := e.store.GetRun(ctx, run)
		if err != nil {
			return Run{}, fmt.Errorf("plenum/pipeline: wait for run %s: %w", run, err)
		}
		if r.State != core.RunRunning && r.State != core.RunWaiting {
			return e.Get(ctx, run)
		}
		select {
		case <-ctx.Done():
			return Run{}, fmt.Errorf("plenum/pipeline: wait for run %s (%s): %w", run, r.State, context.Cause(ctx))
		case <-t.C:
		}
	}
}
