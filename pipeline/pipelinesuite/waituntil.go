package pipelinesuite

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/worker"
)

// engineWith is engine with a worker of slots handlers.
func (e *env) engineWith(slots int, cfg pipeline.EngineOptions, defs ...pipeline.Definition) *pipeline.Engine {
	e.t.Helper()
	return e.engineOf(func(wcfg *worker.Config) {
		wcfg.Queues = map[string]worker.QueueConfig{queue: {MaxWorkers: slots}}
	}, cfg, defs...)
}

// waitUntilHolds: a WaitUntil checks its condition on its schedule until
// it holds, and waits between checks without a worker slot: on a worker
// of one slot, the condition holds only once another run has run its
// step on that slot, which it could not while the wait held it. Each
// check after the first finds its item made claimable (available_at) at
// a time of the schedule, counted from the step's start on the database
// clock.
func waitUntilHolds(e *env) {
	every := pipeline.Backoff{Initial: 200 * time.Millisecond, Max: 400 * time.Millisecond}
	schedule := []time.Duration{200 * time.Millisecond, 600 * time.Millisecond, time.Second, 1400 * time.Millisecond}
	var done atomic.Bool
	var checks atomic.Int32
	second := make(chan struct{})
	var mu sync.Mutex
	var offsets []time.Duration
	ready := pipeline.WaitUntil("ready", func(ctx context.Context, n int) (int, bool, error) {
		info, _ := pipeline.StepInfo(ctx)
		if k := checks.Add(1); k > 1 {
			it, err := e.store.Get(ctx, stepItem(ctx, e, info))
			if err != nil {
				return 0, false, err
			}
			mu.Lock()
			offsets = append(offsets, it.AvailableAt.Sub(it.CreatedAt))
			mu.Unlock()
			if k == 2 {
				close(second)
			}
		}
		return n * 10, done.Load(), nil
	}, pipeline.Flow[int, int]{}, pipeline.WaitOptions{Every: every})
	waiter := define(e, "waiter", pipeline.Then(ready, add("after", 1)))
	other := define(e, "other", pipeline.Step("work", func(_ context.Context, n int) (int, error) {
		done.Store(true)
		return n, nil
	}))
	eng := e.engineWith(1, pipeline.EngineOptions{}, waiter, other)
	run := e.trigger(eng, waiter, 4)
	select {
	case <-second:
	case <-e.ctx.Done():
		e.t.Fatal("no second check")
	}
	e.waitRun(eng, e.trigger(eng, other, 0), pipeline.StateCompleted)
	r := e.waitRun(eng, run, pipeline.StateCompleted)
	if got := output[int](e, r); got != 41 {
		e.t.Errorf("output %d, want 41", got)
	}
	for _, s := range r.Steps {
		if s.Step == "ready" && (s.Attempt != 1 || len(s.Attempts) != 0) {
			e.t.Errorf("the wait's item: attempt %d, history %+v; want its checks to use no attempt", s.Attempt, s.Attempts)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(offsets) == 0 {
		e.t.Fatal("no check after the first")
	}
	for _, off := range offsets {
		on := false
		for _, at := range schedule {
			// The snooze's statement reads the clock just after the check
			// computed the wait.
			on = on || off >= at && off < at+150*time.Millisecond
		}
		extra := off - schedule[len(schedule)-1]
		on = on || extra >= 0 && extra%(400*time.Millisecond) < 150*time.Millisecond
		if !on {
			e.t.Errorf("a check was due %v after the step's start, off its schedule %v (then every 400 ms)", off, schedule)
		}
	}
}

// waitUntilTimesOut: a WaitUntil whose condition never holds halts its
// run with ReasonWaitTimedOut once its timeout passes, or, given a flow
// for the timeout, runs that flow in its place.
func waitUntilTimesOut(e *env) {
	never := func(context.Context, int) (int, bool, error) { return 0, false, nil }
	opts := pipeline.WaitOptions{Every: pipeline.Backoff{Initial: 100 * time.Millisecond}, Timeout: time.Second}
	halts := define(e, "wait-halts", pipeline.WaitUntil("never", never, pipeline.Flow[int, int]{}, opts))
	fallback := pipeline.Step("fallback", func(_ context.Context, n int) (int, error) { return -n, nil })
	branches := define(e, "wait-branches", pipeline.Then(pipeline.WaitUntil("never", never, fallback, opts), add("after", 1)))
	eng := e.engine(pipeline.EngineOptions{}, halts, branches)
	halted := e.trigger(eng, halts, 5)
	branched := e.trigger(eng, branches, 5)
	h := e.waitRun(eng, halted, pipeline.StateHalted)
	if h.Halt == nil || h.Halt.Reason != pipeline.ReasonWaitTimedOut || h.Halt.Step != "never" {
		e.t.Errorf("halt %+v, want the wait's, timed out", h.Halt)
	}
	r := e.waitRun(eng, branched, pipeline.StateCompleted)
	if got := output[int](e, r); got != -4 {
		e.t.Errorf("output %d, want -4 (the timeout's flow, then the step after the wait)", got)
	}
}
