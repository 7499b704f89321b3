package pipelinesuite

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/pipeline"
)

// upgradedVersions are the two versions of the pipeline "upgraded": the
// second adds the steps x and d, drops a, and runs c before b. Each
// step's amount tells which ran: from 0 with the signal 2, version 1
// gives 113, version 2 gives 1117, and a run that went on with version
// 2's steps after version 1's wait would give 118.
func upgradedVersions(e *env) (v1, v2 *pipeline.Pipeline[int, int]) {
	hold := func() pipeline.Flow[int, int] {
		return pipeline.Await("hold", "go", 0, func(_ context.Context, n, k int, _ bool) (int, error) { return n + k, nil })
	}
	v1 = define(e, "upgraded", pipeline.Then(pipeline.Then(pipeline.Then(add("a", 1), hold()), add("b", 10)), add("c", 100)))
	v2 = define(e, "upgraded", pipeline.Then(pipeline.Then(pipeline.Then(pipeline.Then(add("x", 1000), hold()), add("c", 100)), add("b", 10)), add("d", 5)),
		pipeline.Options{Version: 2})
	return v1, v2
}

// upgradedMidRun: runs of version 1 wait on a signal while the program
// is deployed again with version 2, which adds, removes and reorders
// steps. Registered beside version 2, version 1 finishes the old run on
// its own steps while new runs take version 2's. Deployed with version 2
// alone, the old run's next step refuses to run, halting the run with
// ReasonVersionNotRegistered (again when revived there); deployed with
// version 1 again, the run revives and finishes on version 1.
func upgradedMidRun(e *env) {
	v1, v2 := upgradedVersions(e)
	signal := func(eng *pipeline.Engine, run uuid.UUID) {
		e.t.Helper()
		if err := eng.Signal(e.ctx, run, "go", 2); err != nil {
			e.t.Fatal(err)
		}
	}
	check := func(r pipeline.Run, version, out int, steps ...string) {
		e.t.Helper()
		var ran []string
		for _, s := range r.Steps {
			ran = append(ran, s.Step)
		}
		if got := output[int](e, r); got != out || r.Version != version || !slices.Equal(ran, steps) {
			e.t.Errorf("run %s: output %d, version %d, steps %v; want %d, %d, %v", r.ID, got, r.Version, ran, out, version, steps)
		}
	}

	// Version 1 alone: two runs wait on their signal.
	eng, stop := e.engineOn(e.store, 0, v1)
	old, halting := e.trigger(eng, v1, 0), e.trigger(eng, v1, 0)
	e.waitRun(eng, old, pipeline.StateWaiting)
	e.waitRun(eng, halting, pipeline.StateWaiting)
	stop()

	// Versions 2 and 1: the old run finishes on version 1, a new one runs
	// version 2.
	eng, stop = e.engineOn(e.store, 0, v2, v1)
	fresh := e.trigger(eng, v2, 0)
	signal(eng, old)
	signal(eng, fresh)
	check(e.waitRun(eng, old, pipeline.StateCompleted), 1, 113, "a", "hold", "b", "c")
	check(e.waitRun(eng, fresh, pipeline.StateCompleted), 2, 1117, "x", "hold", "c", "b", "d")
	stop()

	// Version 2 alone: the other old run's wait refuses to run, and
	// again once revived.
	eng, stop = e.engineOn(e.store, 0, v2)
	signal(eng, halting)
	r := e.waitRun(eng, halting, pipeline.StateHalted)
	want := `pipeline "upgraded" version 1, which the run started on, is not registered (registered: 2): its step "hold" cannot run`
	if h := r.Halt; h == nil || h.Reason != pipeline.ReasonVersionNotRegistered || h.Step != "hold" || !strings.Contains(h.Detail, want) {
		e.t.Fatalf("halt %+v, want %s at hold: %s", h, pipeline.ReasonVersionNotRegistered, want)
	}
	first := r.Halt.ID
	if err := eng.Revive(e.ctx, halting); err != nil {
		e.t.Fatal(err)
	}
	if r = e.waitRun(eng, halting, pipeline.StateHalted); r.Halt == nil || r.Halt.ID == first || r.Halt.Reason != pipeline.ReasonVersionNotRegistered {
		e.t.Fatalf("revived without version 1: halt %+v, want a second halt for the same reason", r.Halt)
	}
	if len(r.Steps) != 2 || r.Version != 1 {
		e.t.Fatalf("steps %v of version %d, want a and hold of version 1:\n%s", r.Steps, r.Version, steps(r))
	}
	stop()

	// Versions 1 and 2 again: the run revives and finishes on version 1.
	eng, stop = e.engineOn(e.store, 0, v1, v2)
	defer stop()
	if err := eng.Revive(e.ctx, halting); err != nil {
		e.t.Fatal(err)
	}
	check(e.waitRun(eng, halting, pipeline.StateCompleted), 1, 113, "a", "hold", "b", "c")
}

// sleepDurable: a Sleep and a SleepUntil sleep on the database clock
// without a worker slot or a claim, and through a restart. On a worker
// of one slot, another run's step runs while both sleep (an hour, and
// until two hours from now). After a restart an hour and a minute later
// on the database clock (a store with a ClockOffset), the Sleep has
// ended, its one attempt unused by its wakes, and the SleepUntil sleeps
// on, unclaimed; two hours and a minute later, it ends too.
func sleepDurable(e *env) {
	sleeper := define(e, "sleeper", pipeline.Then(pipeline.Sleep[int]("nap", time.Hour), add("woke", 1)))
	until := define(e, "sleep-until", pipeline.SleepUntil("until", func(ms int64) time.Time { return time.UnixMilli(ms) }))
	other := define(e, "busy", add("work", 1))
	defs := []pipeline.Definition{sleeper, until, other}

	eng, stop := e.engineOn(e.store, 1, defs...)
	now, err := e.store.Now(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	napping, waking := e.trigger(eng, sleeper, 0), e.trigger(eng, until, now.Add(2*time.Hour).UnixMilli())
	e.sleeping(eng, napping, "nap", time.Hour)
	e.sleeping(eng, waking, "until", 2*time.Hour-time.Minute)
	e.waitRun(eng, e.trigger(eng, other, 0), pipeline.StateCompleted)
	stop()

	later := e.storeAt(61 * time.Minute)
	eng, stop = e.engineOn(later, 1, defs...)
	r := e.woke(eng, later, napping, "nap")
	if got := output[int](e, r); got != 1 {
		e.t.Errorf("output %d, want 1", got)
	}
	for _, s := range r.Steps {
		if s.Step == "nap" && (s.Attempt != 1 || len(s.Attempts) != 0 || s.FinishedAt.Sub(s.CreatedAt) < time.Hour) {
			e.t.Errorf("the sleep's step: attempt %d, history %+v, from %v to %v; want one attempt, unused, of an hour at least", s.Attempt, s.Attempts, s.CreatedAt, s.FinishedAt)
		}
	}
	e.sleeping(eng, waking, "until", 2*time.Hour-time.Minute)
	stop()

	latest := e.storeAt(2*time.Hour + time.Minute)
	eng, stop = e.engineOn(latest, 1, defs...)
	defer stop()
	if got := output[int64](e, e.woke(eng, latest, waking, "until")); got != now.Add(2*time.Hour).UnixMilli() {
		e.t.Errorf("SleepUntil's output %d, want its input", got)
	}
}

// storeAt opens a store on the subtest's tables whose database clock is
// offset ahead.
func (e *env) storeAt(offset time.Duration) *core.Store {
	e.t.Helper()
	s, err := core.Open(e.ctx, e.db, e.d, core.Options{Prefix: e.prefix, ClockOffset: offset})
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// stepItems reads the items of r's step named step.
func (e *env) stepItems(r pipeline.Run, step string) []core.Item {
	e.t.Helper()
	var out []core.Item
	for _, s := range r.Steps {
		if s.Step != step {
			continue
		}
		it, err := e.store.Get(e.ctx, s.Item)
		if err != nil {
			e.t.Fatal(err)
		}
		out = append(out, it)
	}
	return out
}

// sleeping waits until the step of run sleeps: its item unclaimed, due
// at least d after it was made.
func (e *env) sleeping(eng *pipeline.Engine, run uuid.UUID, step string, d time.Duration) {
	e.t.Helper()
	for {
		r, err := eng.Get(e.ctx, run)
		if err != nil {
			e.t.Fatal(err)
		}
		if r.State != pipeline.StateRunning {
			e.t.Fatalf("run %s is %s, want its step %s asleep; steps:\n%s", run, r.State, step, steps(r))
		}
		for _, it := range e.stepItems(r, step) {
			if it.State == core.StateAvailable && it.AvailableAt.Sub(it.CreatedAt) >= d {
				return
			}
		}
		select {
		case <-e.ctx.Done():
			e.t.Fatalf("run %s: step %s does not sleep %v; steps:\n%s", run, step, d, steps(r))
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// woke waits until run, whose step sleeps past its end on the clock of
// store, has woken and completed; it fails at once if the step goes to
// sleep again (not due within a minute of the clock's now) or the run
// halts.
func (e *env) woke(eng *pipeline.Engine, store *core.Store, run uuid.UUID, step string) pipeline.Run {
	e.t.Helper()
	for {
		r, err := eng.Get(e.ctx, run)
		if err != nil {
			e.t.Fatal(err)
		}
		switch r.State {
		case pipeline.StateCompleted:
			return r
		case pipeline.StateRunning:
		default:
			e.t.Fatalf("run %s is %s, want it completed after its step %s woke; steps:\n%s", run, r.State, step, steps(r))
		}
		now, err := store.Now(e.ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		for _, it := range e.stepItems(r, step) {
			if it.State == core.StateAvailable && it.AvailableAt.After(now.Add(time.Minute)) {
				e.t.Fatalf("run %s: step %s sleeps again, until %v, past its end (now %v)", run, step, it.AvailableAt, now)
			}
		}
		select {
		case <-e.ctx.Done():
			e.t.Fatalf("run %s did not complete; steps:\n%s", run, steps(r))
		case <-time.After(25 * time.Millisecond):
		}
	}
}
