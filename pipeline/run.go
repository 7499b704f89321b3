package pipeline

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
)

// Trigger starts a run of d with input (any value that encodes to JSON
// that d's input type decodes) and returns its id.
func (e *Engine) Trigger(ctx context.Context, d Definition, input any) (uuid.UUID, error) {
	return e.trigger(ctx, nil, d, input)
}

// TriggerTx starts a run of d inside the caller's transaction tx: the run
// exists only if tx commits.
func (e *Engine) TriggerTx(ctx context.Context, tx dialect.Querier, d Definition, input any) (uuid.UUID, error) {
	if tx == nil {
		return uuid.Nil, fmt.Errorf("plenum/pipeline: TriggerTx: nil transaction")
	}
	return e.trigger(ctx, tx, d, input)
}

func (e *Engine) trigger(ctx context.Context, tx dialect.Querier, d Definition, input any) (uuid.UUID, error) {
	def, err := e.lookup(d)
	if err != nil {
		return uuid.Nil, err
	}
	in, err := json.Marshal(input)
	if err != nil {
		return uuid.Nil, fmt.Errorf("plenum/pipeline: %q: encode the input %T: %w", def.name, input, err)
	}
	if err := def.checkInput(in); err != nil {
		return uuid.Nil, fmt.Errorf("plenum/pipeline: %q: the input does not decode as the pipeline's input type: %w", def.name, err)
	}
	run := uuid.Must(uuid.NewV7())
	first := entry(def.root)
	spec, err := e.spec(def, envelope{Run: run, Node: first.name, In: in}, first)
	if err != nil {
		return uuid.Nil, err
	}
	if tx != nil {
		_, err = e.store.EnqueueTx(ctx, tx, spec)
	} else {
		_, err = e.store.Enqueue(ctx, spec)
	}
	if err != nil {
		return uuid.Nil, fmt.Errorf("plenum/pipeline: trigger %q: %w", def.name, err)
	}
	return run, nil
}

var _ = core.ErrNotFound
