package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
)

// TriggerOptions tune a trigger.
type TriggerOptions struct {
	// Key makes triggering idempotent: a second trigger of the same
	// pipeline with the same key returns the first run's id and starts
	// nothing. Up to 200 characters. Default: none.
	Key string
}

// Trigger starts a run of d with input (a value that encodes to JSON
// that d's input type decodes) and returns its id.
func (e *Engine) Trigger(ctx context.Context, d Definition, input any, opts ...TriggerOptions) (uuid.UUID, error) {
	return e.trigger(ctx, nil, d, input, opts)
}

// TriggerTx starts a run of d inside the caller's transaction tx: the run
// exists only if tx commits, together with the caller's own writes (no
// retry there, and the worker finds the first step at its next poll, or
// at once on PostgreSQL).
func (e *Engine) TriggerTx(ctx context.Context, tx dialect.Querier, d Definition, input any, opts ...TriggerOptions) (uuid.UUID, error) {
	if tx == nil {
		return uuid.Nil, errors.New("plenum/pipeline: TriggerTx: nil transaction")
	}
	return e.trigger(ctx, tx, d, input, opts)
}

// Trigger starts a run of p on e with input, p's own input type, and
// returns its id: the typed form of Engine.Trigger, which Go checks where
// it is called.
func (p *Pipeline[I, O]) Trigger(ctx context.Context, e *Engine, input I, opts ...TriggerOptions) (uuid.UUID, error) {
	if e == nil {
		return uuid.Nil, errors.New("plenum/pipeline: Trigger: nil engine")
	}
	return e.trigger(ctx, nil, p, input, opts)
}

// TriggerTx starts a run of p on e with input inside the caller's
// transaction tx, as Engine.TriggerTx does: the typed form.
func (p *Pipeline[I, O]) TriggerTx(ctx context.Context, e *Engine, tx dialect.Querier, input I, opts ...TriggerOptions) (uuid.UUID, error) {
	if e == nil {
		return uuid.Nil, errors.New("plenum/pipeline: TriggerTx: nil engine")
	}
	return e.TriggerTx(ctx, tx, p, input, opts...)
}

func (e *Engine) trigger(ctx context.Context, tx dialect.Querier, d Definition, input any, opts []TriggerOptions) (uuid.UUID, error) {
	def, err := e.lookup(d)
	if err != nil {
		return uuid.Nil, err
	}
	var o TriggerOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	in, err := json.Marshal(input)
	if err != nil {
		return uuid.Nil, fmt.Errorf("plenum/pipeline: %q: encode the input %T: %w", def.name, input, err)
	}
	if err := def.checkInput(in); err != nil {
		return uuid.Nil, fmt.Errorf("plenum/pipeline: %q: the input does not decode as the pipeline's input type: %w", def.name, err)
	}
	first := entry(def.root)
	spec, err := e.spec(def, envelope{Node: first.name, In: in}, first, func() (json.RawMessage, error) { return in, nil })
	if err != nil {
		return uuid.Nil, err
	}
	sealed, err := e.seal(sealAAD(def.name, sealInput), in)
	if err != nil {
		return uuid.Nil, fmt.Errorf("plenum/pipeline: %q: the run's input: %w", def.name, err)
	}
	rs := core.RunSpec{Name: def.name, Key: o.Key, Input: sealed, OnHalt: &core.HaltItem{Queue: e.cfg.Queue, Kind: haltKind}, Version: def.version}
	var created core.CreateRunResult
	if tx != nil {
		created, _, err = e.store.CreateRunTx(ctx, tx, rs, spec)
	} else {
		created, _, err = e.store.CreateRun(ctx, rs, spec)
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("plenum/pipeline: trigger %q: %w", def.name, err)
	}
	return created.ID, nil
}

// SignalOptions tune a signal.
type SignalOptions struct {
	// Key makes sending idempotent: the signal (run, name, key) is stored
	// once, however often it is sent. Default: the name, so that a run
	// gets one signal of each name however often it is sent; give keys
	// to send several of one name (each taken by one waiting step).
	Key string
}

// Signal sends the signal name, with payload (any value that encodes to
// JSON), to run: a step of the run waiting on name (Await) wakes at once
// and takes it; one sent before a step waits is kept for it. Each signal
// is taken by one step, once.
func (e *Engine) Signal(ctx context.Context, run uuid.UUID, name string, payload any, opts ...SignalOptions) error {
	var o SignalOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	if o.Key == "" {
		o.Key = name
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("plenum/pipeline: signal %q: encode the payload %T: %w", name, payload, err)
	}
	if b, err = e.seal(signalAAD(run, name), b); err != nil {
		return fmt.Errorf("plenum/pipeline: signal %q: %w", name, err)
	}
	if _, err := e.store.Signal(ctx, core.SignalSpec{Run: run, Name: name, Key: o.Key, Payload: b}); err != nil {
		return fmt.Errorf("plenum/pipeline: signal %q to run %s: %w", name, run, err)
	}
	return nil
}

// Cancel cancels run: every unfinished step is cancelled (a running
// handler's context ends), no fan-out goes on and no join runs, and the
// run ends cancelled.
func (e *Engine) Cancel(ctx context.Context, run uuid.UUID) error {
	if _, err := e.store.CancelRun(ctx, run); err != nil {
		return fmt.Errorf("plenum/pipeline: cancel run %s: %w", run, err)
	}
	return nil
}

// Revive brings a halted run back: its failed (dead) steps run again with
// their attempts reset, and the fan-ins above them again once they
// finish; completed steps are not run again, and every step's history
// (earlier attempts and their errors) stays readable in Get. A run with
// no failed step and nothing left to run gives core.ErrNothingToRevive
// and stays halted.
func (e *Engine) Revive(ctx context.Context, run uuid.UUID) error {
	if _, err := e.store.ReviveRun(ctx, run); err != nil {
		return fmt.Errorf("plenum/pipeline: revive run %s: %w", run, err)
	}
	return nil
}

// ReviveStep brings a halted run back by one of its failed steps (item,
// as Get lists it): the step runs again, attempts reset and history
// kept. A step inside a fan-out whose join already failed is revived with
// its whole failed subtree: the fan-out is re-armed, its failed children
// run again, and its fan-in (and those above it) once they finish. The
// run's other failed steps stay failed (Revive revives them all).
func (e *Engine) ReviveStep(ctx context.Context, run, item uuid.UUID) error {
	// One transaction revives the step (re-arming its fan-out if that
	// fired) and resumes the run, so that no sibling can fire the fan-out
	// on the failure being revived in between.
	if _, err := e.store.ReviveRunItem(ctx, run, item); err != nil {
		return fmt.Errorf("plenum/pipeline: revive step %s: %w", item, err)
	}
	return nil
}
