package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/plenumdb/plenum/core"
)

// repeat runs one repetition of the item's RepeatUntil: the step ends
// when the body says done or the repetition is the schedule's last;
// otherwise the item completes, in the transaction that commits what the
// body fenced, making the next repetition's item, due at its scheduled
// time.
func (j *job) repeat(ctx context.Context) error {
	n := j.n
	now, err := j.e.store.Now(ctx)
	if err != nil {
		return err
	}
	st, rep := j.repetition(now)
	info, _ := StepInfo(ctx)
	info.IdempotencyKey = fmt.Sprintf("%s#%d", info.IdempotencyKey, rep.Index)
	ctx = context.WithValue(context.WithValue(ctx, infoKey{}, info), jobKey{}, j)
	if j.w.Attempt() > maxAttempts(j.def, n)-extraAttempts(n) {
		// The attempt kept for ContinueOnError: the ones before it
		// failed, the last by running past its timeout.
		return j.nextRepetition(ctx, st, rep, nil, errors.New("its attempts were used up"))
	}
	type ran struct {
		out  json.RawMessage
		done bool
	}
	r, err := call(func() (ran, error) {
		out, done, err := n.repeat(ctx, j.env.In, rep)
		return ran{out, done}, err
	})
	if err != nil {
		if n.onError == HaltOnError || !isPermanent(err) && j.w.Attempt() < maxAttempts(j.def, n)-extraAttempts(n) {
			return err
		}
		j.fences = nil // the failed repetition commits nothing
		return j.nextRepetition(ctx, st, rep, nil, err)
	}
	if r.done || rep.Last {
		return j.advance(ctx, r.out, nil)
	}
	return j.nextRepetition(ctx, st, rep, r.out, nil)
}

// repetition is the repetition the item runs at now, on the database
// clock: the one its envelope names (the first, due at the step's start,
// when it names none), or the one the catch-up rule takes instead.
func (j *job) repetition(now time.Time) (repeatState, Repetition) {
	st := repeatState{At: j.w.Item().CreatedAt.Add(j.n.opts.Delay)}
	if j.env.Rep != nil {
		st = *j.env.Rep
	}
	return j.n.due(st, now)
}

// due is the repetition that runs at now in place of st's: st's own,
// or under SkipToLatest the latest one due by now (within the end).
func (n *node) due(st repeatState, now time.Time) (repeatState, Repetition) {
	start := st.At.Add(-time.Duration(st.Index) * n.interval)
	last := -1 // no end
	if n.until > 0 {
		last = int(n.until / n.interval)
	}
	missed := 0
	if n.catchUp == SkipToLatest && now.Sub(st.At) >= n.interval {
		latest := int(now.Sub(start) / n.interval)
		if last >= 0 {
			latest = min(latest, last)
		}
		if latest > st.Index {
			missed = latest - st.Index
			st.Index, st.At = latest, start.Add(time.Duration(latest)*n.interval)
		}
	}
	return st, Repetition{Index: st.Index, At: st.At, Missed: missed, Last: last >= 0 && st.Index >= last}
}

// nextRepetition completes the item of repetition rep, which gave out or
// failed with failed, and makes the next repetition's item, due at its
// time, in one fenced transaction with what the body fenced; after the
// schedule's last repetition, the step ends with the last output a
// repetition gave.
func (j *job) nextRepetition(ctx context.Context, st repeatState, rep Repetition, out json.RawMessage, failed error) error {
	n := j.n
	if out != nil {
		st.Out = out
	}
	if rep.Last {
		if st.Out == nil {
			st.Out = json.RawMessage("null") // no repetition gave an output
		}
		return j.advance(ctx, st.Out, nil)
	}
	res := repeatResult{Repetition: rep.Index, At: rep.At, Missed: rep.Missed}
	if failed != nil {
		res.Error = failed.Error()
	}
	result, err := json.Marshal(res)
	if err != nil {
		return err
	}
	next := repeatState{Index: st.Index + 1, At: st.At.Add(n.interval), Out: st.Out}
	spec, err := j.e.spec(j.def, envelope{Node: n.name, In: j.env.In, Idx: j.env.Idx, Path: j.env.Path, Rep: &next}, n, j.runIn(ctx))
	if err != nil {
		return err
	}
	now, err := j.e.store.Now(ctx)
	if err != nil {
		return err
	}
	// Due at its time on the database clock; one already due (catching
	// up) runs at once.
	spec.Delay = min(max(next.At.Sub(now), 0), core.MaxDelay)
	if err := j.w.SetResult(result); err != nil {
		return err
	}
	return j.w.Fence(ctx, func(ctx context.Context, f *core.Fenced) error {
		for _, fence := range j.fences {
			if err := fence(ctx, f); err != nil {
				return err
			}
		}
		_, err := f.Then(ctx, spec, result)
		return err
	})
}
