package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
)

// Sleep is a step that sleeps for d, counted from the step's start (when
// its item was made, plus its Delay) on the database clock, and then
// passes its input on as its output. The sleep is durable: the step's
// item is put back, claimable when the sleep ends (a snooze, which uses
// no attempt), so a sleeping step holds no worker slot and no claim, and
// a restart, a crash or a revive during the sleep neither shortens it nor
// starts it over. d must be above zero and at most core.MaxDelay.
//
// StepOptions.Delay postpones a step by a fixed time too; Sleep is a step
// of its own, drawn in the pipeline's graph, and SleepUntil sleeps until
// a time its input gives.
func Sleep[T any](name string, d time.Duration) Flow[T, T] {
	return Flow[T, T]{&node{kind: kindSleep, name: name, sleepFor: d}}
}

// SleepUntil is a step that sleeps until the time until gives for its
// input, compared with the database clock's now, and then passes its
// input on as its output; a time already past wakes it at once. It sleeps
// as Sleep does: without a slot or a claim, surviving restarts. until
// must be deterministic (it runs again at each wake), and its time
// within core.MaxDelay of the step's start.
func SleepUntil[T any](name string, until func(in T) time.Time) Flow[T, T] {
	n := &node{kind: kindSleep, name: name}
	if until != nil {
		n.sleepUntil = func(raw json.RawMessage) (time.Time, error) {
			in, err := decode[T](raw)
			if err != nil {
				return time.Time{}, Permanent(fmt.Errorf("sleep %q: decode its input as %T: %w", name, in, err))
			}
			return until(in), nil
		}
	}
	return Flow[T, T]{n}
}

// checkSleep checks a Sleep's duration or a SleepUntil's function.
func (v *validator) checkSleep(path string, c *node) {
	if c.sleepUntil == nil && (c.sleepFor <= 0 || c.sleepFor > core.MaxDelay) {
		v.fail(path, "the sleep's duration is %v: it must be above zero and at most %v (or a SleepUntil's function, which is nil)", c.sleepFor, core.MaxDelay)
	}
}

// sleep wakes the item of a Sleep: before the sleep's end (on the
// database clock) the item is snoozed until then; after it, the step
// passes its input on.
func (j *job) sleep(ctx context.Context) error {
	n := j.n
	due := j.w.Item().CreatedAt.Add(n.opts.Delay + n.sleepFor)
	if n.sleepUntil != nil {
		t, err := call(func() (time.Time, error) { return n.sleepUntil(j.env.In) })
		if err != nil {
			return err
		}
		due = t
	}
	now, err := j.e.store.Now(ctx)
	if err != nil {
		return err
	}
	if left := due.Sub(now); left > 0 {
		// A longer sleep than a snooze can take wakes once on the way.
		return worker.Snooze(min(left, core.MaxDelay))
	}
	return j.advance(ctx, j.env.In, nil)
}
