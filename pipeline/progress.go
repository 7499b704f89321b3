package pipeline

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
)

// SetProgress reports the progress and partial output of the step ctx
// runs, as worker.Job.SetProgress does for a handler: the latest report
// is written at most once per the worker's ProgressInterval, fenced by
// the step's claim, and the last one in the transaction that completes
// the step. Readers see it in core.Store.Progress and the dashboard; the
// step that follows in the chain reads it with PreviousProgress, and the
// step's own next attempt, after a failure, with StepProgress. Call it
// from the function of a step, an await, a combine or a collapse;
// elsewhere it returns an error. A report out of bounds is a
// *core.InputError.
func SetProgress(ctx context.Context, p core.Progress) error {
	j, _ := ctx.Value(jobKey{}).(*job)
	if j == nil {
		return errors.New("plenum/pipeline: SetProgress: not called from a step, await, combine or collapse function")
	}
	return j.w.SetProgress(p)
}

// StepProgress returns the last progress report of the step ctx runs, as
// written by an earlier attempt of it (a step that failed after reporting
// partial output leaves it for its retry, which may resume from it), or
// by this attempt once written; false when there is none. Elsewhere it
// returns an error.
func StepProgress(ctx context.Context) (core.Progress, bool, error) {
	j, _ := ctx.Value(runInputKey{}).(*job)
	if j == nil {
		return core.Progress{}, false, errors.New("plenum/pipeline: StepProgress: not called from a function of a pipeline's run")
	}
	return j.e.store.Progress(ctx, j.w.ID())
}

// PreviousProgress returns the last progress report of the step before
// the one ctx runs in its chain (Then): the step whose completion started
// this one, with its partial output. It is false when that step reported
// none, and for a step no step of a chain started (the first of a run, a
// branch of a fan-out, a join). Elsewhere it returns an error.
func PreviousProgress(ctx context.Context) (core.Progress, bool, error) {
	j, _ := ctx.Value(runInputKey{}).(*job)
	if j == nil {
		return core.Progress{}, false, errors.New("plenum/pipeline: PreviousProgress: not called from a function of a pipeline's run")
	}
	if j.env.From == uuid.Nil {
		return core.Progress{}, false, nil
	}
	return j.e.store.Progress(ctx, j.env.From)
}
