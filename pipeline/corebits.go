package pipeline

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
)

// then completes the fenced item with result and inserts next in its
// place at its barrier.
func then(ctx context.Context, f *core.Fenced, next core.ItemSpec, result json.RawMessage) error {
	b, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: "pipeline.then", Join: core.JoinSpec{Queue: next.Queue, Kind: next.Kind, Payload: next.Payload, MaxAttempts: next.MaxAttempts}})
	if err != nil {
		return err
	}
	if _, err := f.Seal(ctx, b.ID); err != nil {
		return err
	}
	return f.Complete(ctx, result)
}

// haltRun halts the run and parks the fenced item.
func haltRun(ctx context.Context, f *core.Fenced, h Halt, notice core.ItemSpec) error {
	if _, err := f.Enqueue(ctx, notice); err != nil {
		return err
	}
	_, err := f.Fail(ctx, core.FailParams{Error: string(h.Reason) + ": " + h.Error, Discard: true})
	return err
}

// finishRun records the run's output.
func finishRun(ctx context.Context, f *core.Fenced, run uuid.UUID, out json.RawMessage) error {
	return nil
}

func (j *job) await(ctx context.Context) error {
	return Permanent(errors.New("await: not yet"))
}
