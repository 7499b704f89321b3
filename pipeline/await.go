package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/plenumdb/plenum/core"
)

// errPeeked rolls back the fence in which an await found its signal or
// its timeout: the step's function runs outside any transaction, and the
// signal is taken in the transaction that completes the step.
var errPeeked = errors.New("plenum/pipeline: signal found")

// errSignalMoved is an await whose signal was taken by another step
// between the look and the take: the attempt is retried.
var errSignalMoved = errors.New("plenum/pipeline: the signal was taken by another step")

// await looks for the step's signal: without one (and before the
// deadline) the item waits, settled, until the signal or the deadline
// wakes it; with one (or after the deadline) the step's function runs,
// and the signal is taken in the fence that completes the step, so that
// it is taken once and never lost to a failed attempt.
func (j *job) await(ctx context.Context) error {
	p := core.AwaitParams{Name: j.n.signal, Timeout: j.n.timeout}
	var seen core.AwaitResult
	err := j.w.Settle(ctx, func(ctx context.Context, f *core.Fenced) error {
		r, err := f.Await(ctx, p)
		if err != nil {
			return err
		}
		if r.Waiting {
			return nil // the item waits: settled
		}
		seen = r
		return errPeeked
	})
	if !errors.Is(err, errPeeked) {
		return err
	}
	var payload json.RawMessage
	if seen.Signal != nil {
		if payload, err = j.e.open(signalAAD(j.w.Item().Run, j.n.signal), seen.Signal.Payload); err != nil {
			return fmt.Errorf("the payload of signal %q: %w", j.n.signal, err)
		}
	}
	out, err := call(func() (json.RawMessage, error) {
		return j.n.await(context.WithValue(ctx, jobKey{}, j), j.env.In, payload, seen.TimedOut)
	})
	if err != nil {
		return err
	}
	return j.advance(ctx, out, func(ctx context.Context, f *core.Fenced) error {
		r, err := f.Await(ctx, p)
		switch {
		case err != nil:
			return err
		case seen.TimedOut && r.TimedOut:
			return nil
		case seen.Signal != nil && r.Signal != nil && r.Signal.ID == seen.Signal.ID:
			return nil
		}
		return fmt.Errorf("%w (await %q)", errSignalMoved, j.n.signal)
	})
}
