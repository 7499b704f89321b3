package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
)

// WaitOptions tune a WaitUntil.
type WaitOptions struct {
	// StepOptions tune each check as a step's: MaxAttempts bounds the
	// checks that fail (return an error) in a row, Timeout bounds one
	// check, Backoff spaces the retries of a failed one, Delay postpones
	// the first check, FlowKey keys the checks' item.
	StepOptions
	// Every spaces the checks: the first runs when the step starts, the
	// next Every.Initial later, and each wait after that grows by
	// Every.Factor (2 by default; 1 for a fixed interval) up to Every.Max,
	// moved by Every.Jitter. The checks follow that schedule from the
	// step's start on the database clock, so a check held up (by a busy
	// queue, or a crash) does not push the later ones back. Every.Initial
	// is required.
	Every Backoff
	// Timeout is how long the step waits for the condition, counted from
	// its start (when its item was made, plus its Delay) on the database
	// clock: a last check runs at the timeout, and if the condition does
	// not hold then, the wait has timed out. Default (0): no timeout.
	Timeout time.Duration
}

// WaitUntil is a step that waits until a condition holds: cond runs on
// the input, as a claimed item, on the schedule of opts.Every, until it
// returns true, and the step's output is what cond returned then. Between
// checks the step's item is put back, to be claimed at the next check's
// time (a snooze, which uses no attempt): a waiting step holds no worker
// slot and no claim, and a crash between checks, or during one, loses
// nothing (the check runs again). cond must only read: it can run more
// than once for one check.
//
// When opts.Timeout passes without the condition holding, onTimeout runs
// on the input in the step's place, its output the step's; the zero Flow
// for onTimeout halts the run with ReasonWaitTimedOut instead.
func WaitUntil[I, O any](name string, cond func(ctx context.Context, in I) (O, bool, error), onTimeout Flow[I, O], opts WaitOptions) Flow[I, O] {
	n := &node{kind: kindWaitUntil, name: name, opts: opts.StepOptions, every: opts.Every, waitFor: opts.Timeout, onTimeout: onTimeout.n}
	if cond != nil {
		n.cond = func(ctx context.Context, raw json.RawMessage) (json.RawMessage, bool, error) {
			in, err := decode[I](raw)
			if err != nil {
				return nil, false, Permanent(fmt.Errorf("wait %q: decode its input as %T: %w", name, in, err))
			}
			out, ok, err := cond(ctx, in)
			if err != nil || !ok {
				return nil, false, err
			}
			b, err := encode(name, out)
			return b, err == nil, err
		}
	}
	return Flow[I, O]{n}
}

// waitUntil runs one check of the item's WaitUntil: on success the step
// advances; on a miss the item is snoozed to the next check's time, or,
// past the timeout, the run halts or takes the timeout's flow.
func (j *job) waitUntil(ctx context.Context) error {
	n := j.n
	type checked struct {
		out json.RawMessage
		ok  bool
	}
	c, err := call(func() (checked, error) {
		out, ok, err := n.cond(ctx, j.env.In)
		return checked{out, ok}, err
	})
	if err != nil {
		return err
	}
	if out, ok := c.out, c.ok; ok {
		return j.advance(ctx, out, nil)
	}
	now, err := j.e.store.Now(ctx)
	if err != nil {
		return err
	}
	elapsed := now.Sub(j.w.Item().CreatedAt.Add(n.opts.Delay))
	if n.waitFor > 0 && elapsed >= n.waitFor {
		return j.waitTimedOut(ctx)
	}
	wait := n.every.untilNext(elapsed)
	if n.waitFor > 0 {
		wait = min(wait, n.waitFor-elapsed)
	}
	return worker.Snooze(wait)
}

// waitTimedOut halts the run, or starts the timeout's flow in the item's
// place.
func (j *job) waitTimedOut(ctx context.Context) error {
	n := j.n
	detail := fmt.Sprintf("the condition did not hold within %v", n.waitFor)
	if n.onTimeout == nil {
		return j.halt(ctx, ReasonWaitTimedOut, detail)
	}
	first := entry(n.onTimeout)
	spec, err := j.e.spec(j.def, envelope{Node: first.name, In: j.env.In, Idx: j.env.Idx, Path: j.env.Path}, first, j.runIn(ctx))
	if err != nil {
		return err
	}
	result, err := json.Marshal(map[string]string{"timedOut": detail})
	if err != nil {
		return err
	}
	if err := j.w.SetResult(result); err != nil {
		return err
	}
	return j.w.Fence(ctx, func(ctx context.Context, f *core.Fenced) error {
		_, err := f.Then(ctx, spec, result)
		return err
	})
}

// untilNext is how long after elapsed (since the first check) the next
// check of the schedule b spaces is due: checks at 0, Initial, Initial
// plus Initial*Factor, ..., the waits capped at Max; jittered, at least a
// millisecond.
func (b Backoff) untilNext(elapsed time.Duration) time.Duration {
	var at time.Duration
	plain := b
	plain.Jitter = 0
	for k := 1; ; k++ {
		step := plain.wait(k)
		if at+step > elapsed {
			wait := at + step - elapsed
			if b.Jitter > 0 {
				// Jitter the whole wait's share still ahead.
				wait = time.Duration(float64(wait) * float64(b.wait(k)) / float64(step))
			}
			return max(wait, time.Millisecond)
		}
		at += step
		if k > 64 || (b.Max > 0 && step >= b.Max) || step >= core.MaxDelay {
			// The waits are constant from here: skip the whole ones.
			whole := (elapsed - at) / step
			at += whole * step
		}
	}
}
