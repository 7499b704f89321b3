package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/plenumdb/plenum/core"
)

// RunContext returns the value of key in the run's context, decoded as T
// (json.RawMessage for the JSON itself), and whether the context holds
// the key, in any function of the run. The context is the small
// key-value document that the run's steps write with SetRunContext, so
// that a later step reads what an earlier one learned without every step
// in between passing it along in its output.
//
// A function reads the context as it stands when the function first asks
// for it (one read of the database per attempt), plus what the attempt
// itself set since: every write of a step that completed before this step
// was made is there, since a write commits with its step's completion.
// Two branches of a divide or an expand run side by side and read none of
// each other's writes that were not committed when they first asked.
// Elsewhere, or when the value does not decode as T, it returns an error.
func RunContext[T any](ctx context.Context, key string) (T, bool, error) {
	var v T
	j, _ := ctx.Value(runInputKey{}).(*job)
	if j == nil {
		return v, false, errors.New("plenum/pipeline: RunContext: not called from a function of a pipeline's run")
	}
	raw, ok, err := j.contextValue(ctx, key)
	if err != nil || !ok {
		return v, false, err
	}
	if v, err = decode[T](raw); err != nil {
		return v, true, fmt.Errorf("plenum/pipeline: %q: the run context's key %q does not decode as %T: %w", j.def.name, key, v, err)
	}
	return v, true, nil
}

// SetRunContext sets key of the run's context to v, as JSON, for the
// steps after this one: the write commits with the step's completion, in
// its transaction, or not at all, so an attempt that fails, times out,
// loses its claim or dies with its worker writes nothing. Call it from
// the function of a step, an await, a combine or a collapse, before it
// returns; the function's later RunContext calls read the value set.
// Elsewhere it returns an error.
//
// When two branches of a run write the same key, the write that commits
// last wins (writes to a run's context serialize on the run's row), and
// the context records which step's item wrote each value. A key is 1 to
// core.MaxRunContextKeyLen characters; a value at most
// core.MaxRunContextValueBytes of JSON; a run's context holds at most
// core.MaxRunContextKeys keys and core.MaxRunContextBytes of values. A
// key or value out of bounds is refused here, and a write that would
// take the context past its bounds halts the run when the step
// completes: the errors name the key, and no retry could fix them
// (errors.Is core.ErrInvalidInput, and core.ErrRunContextFull for the
// bounds of the whole context).
func SetRunContext(ctx context.Context, key string, v any) error {
	j, _ := ctx.Value(jobKey{}).(*job)
	if j == nil {
		return errors.New("plenum/pipeline: SetRunContext: not called from a step, await, combine or collapse function")
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("plenum/pipeline: %q: the run context's key %q: %w", j.def.name, key, err)
	}
	if err := core.ValidRunContext(key, raw); err != nil {
		return Permanent(err)
	}
	if j.sets == nil {
		j.sets = map[string]json.RawMessage{}
	}
	if _, ok := j.sets[key]; !ok {
		j.setOrder = append(j.setOrder, key)
	}
	j.sets[key] = raw
	return nil
}

// contextValue returns key's value as the job sees it: its own writes,
// else the run's context as first read.
func (j *job) contextValue(ctx context.Context, key string) (json.RawMessage, bool, error) {
	if v, ok := j.sets[key]; ok {
		return v, true, nil
	}
	if j.runContext == nil {
		entries, err := j.e.store.RunContext(ctx, j.w.Item().Run)
		if err != nil {
			return nil, false, fmt.Errorf("plenum/pipeline: %q: read the context of run %s: %w", j.def.name, j.w.Item().Run, err)
		}
		j.runContext = make(map[string]json.RawMessage, len(entries))
		for _, e := range entries {
			v, err := j.e.open(sealAAD(j.def.name, sealContext+":"+e.Key), e.Value)
			if err != nil {
				return nil, false, fmt.Errorf("plenum/pipeline: %q: the run context's key %q: %w", j.def.name, e.Key, err)
			}
			j.runContext[e.Key] = v
		}
	}
	v, ok := j.runContext[key]
	return v, ok, nil
}

// writeContext writes the job's SetRunContext calls through f, in the
// order of their keys' first set: last in the fence, after the item's
// completion, since the write locks the run's row. A write past the
// context's bounds is permanent.
func (j *job) writeContext(ctx context.Context, f *core.Fenced) error {
	for _, k := range j.setOrder {
		v, err := j.e.seal(sealAAD(j.def.name, sealContext+":"+k), j.sets[k])
		if err != nil {
			return err
		}
		if err := f.SetRunContext(ctx, k, v); err != nil {
			if errors.Is(err, core.ErrRunContextFull) {
				return Permanent(err)
			}
			return err
		}
	}
	return nil
}
