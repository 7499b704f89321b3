package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"
)

// RunInput returns the input the run was triggered with, decoded as T
// (json.RawMessage for the JSON itself), in any function of the run: a
// step, route, expand's list or source, collapse, combine or await. It
// spares a flow from passing the run's input along as a field of every
// step's output to the steps that need it. Elsewhere, or when the input
// does not decode as T, it returns an error.
//
// The input is read from the run once, when a function first asks for
// it, and kept by the engine: a run's input never changes, so the other
// steps of the run that this process executes, and later calls in the
// same step, read it from memory. A step that never asks costs nothing:
// no item carries the run's input besides the run itself. Call it from
// the function, not from inside the fn given to Fence, where the store
// cannot be read.
func RunInput[T any](ctx context.Context) (T, error) {
	var v T
	j, _ := ctx.Value(runInputKey{}).(*job)
	if j == nil {
		return v, errors.New("plenum/pipeline: RunInput: not called from a function of a pipeline's run")
	}
	raw, err := j.runInput(ctx)
	if err != nil {
		return v, err
	}
	if v, err = decode[T](raw); err != nil {
		return v, fmt.Errorf("plenum/pipeline: %q: the run's input does not decode as %T: %w", j.def.name, v, err)
	}
	return v, nil
}

// runInputKey holds the *job whose run's input RunInput reads.
type runInputKey struct{}

// runInput returns the raw input of the job's run, from the engine's
// cache or, on a miss, from the run's row.
func (j *job) runInput(ctx context.Context) (json.RawMessage, error) {
	run := j.w.Item().Run
	if in, ok := j.e.inputs.get(run); ok {
		return in, nil
	}
	r, err := j.e.store.GetRun(ctx, run)
	if err != nil {
		return nil, fmt.Errorf("plenum/pipeline: %q: read the input of run %s: %w", j.def.name, run, err)
	}
	in, err := j.e.open(sealAAD(j.def.name, sealInput), r.Input)
	if err != nil {
		return nil, fmt.Errorf("plenum/pipeline: %q: the input of run %s: %w", j.def.name, run, err)
	}
	j.e.inputs.put(run, in)
	return in, nil
}

// inputCacheBytes bounds the run inputs an engine keeps: the most recent
// ones that fit, each at most a quarter of it.
const inputCacheBytes = 8 << 20

// inputCache keeps the inputs of the runs whose steps asked for them,
// the oldest dropped first once they exceed inputCacheBytes. Inputs are
// written once, when the run is created, so an entry is never stale.
type inputCache struct {
	mu    sync.Mutex
	m     map[uuid.UUID]json.RawMessage
	order []uuid.UUID
	bytes int
}

func (c *inputCache) get(run uuid.UUID) (json.RawMessage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	in, ok := c.m[run]
	return in, ok
}

func (c *inputCache) put(run uuid.UUID, in json.RawMessage) {
	if len(in) > inputCacheBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[uuid.UUID]json.RawMessage{}
	}
	if _, ok := c.m[run]; ok {
		return
	}
	for len(c.order) > 0 && c.bytes+len(in) > inputCacheBytes {
		old := c.order[0]
		c.order = c.order[1:]
		c.bytes -= len(c.m[old])
		delete(c.m, old)
	}
	c.m[run] = in
	c.order = append(c.order, run)
	c.bytes += len(in)
}
