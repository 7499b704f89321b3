package pipelinesuite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/pipeline"
)

// haltOneRecord: a step that uses up its attempts, by a Permanent error
// or by a plain one on its last attempt, halts its run with one record
// that reads the same everywhere: Get's Halt and the Halt OnHalt receives
// are equal, field for field (the step, its item, and the step's last
// error as the detail), and core's GetRun holds the same detail and item.
func haltOneRecord(e *env) {
	var mu sync.Mutex
	delivered := map[uuid.UUID]pipeline.Halt{} // by run
	permanent := pipeline.Step("refuses", func(_ context.Context, n int) (int, error) {
		return 0, pipeline.Permanent(fmt.Errorf("input %d refused for good", n))
	})
	plain := pipeline.Step("flaky", func(ctx context.Context, n int) (int, error) {
		info, _ := pipeline.StepInfo(ctx)
		return 0, fmt.Errorf("input %d failed at attempt %d", n, info.Attempt)
	}, pipeline.StepOptions{MaxAttempts: 2})
	pp := define(e, "halt-permanent", pipeline.Then(add("before", 1), permanent))
	pf := define(e, "halt-plain", pipeline.Then(add("before", 1), plain))
	eng := e.engine(pipeline.EngineOptions{OnHalt: func(_ context.Context, h pipeline.Halt) error {
		mu.Lock()
		defer mu.Unlock()
		delivered[h.Run] = h
		return nil
	}}, pp, pf)
	for _, c := range []struct {
		def    pipeline.Definition
		step   string
		detail string
	}{
		{pp, "refuses", "input 2 refused for good"},
		{pf, "flaky", "input 2 failed at attempt 2"},
	} {
		run := e.trigger(eng, c.def, 1)
		r := e.waitRun(eng, run, pipeline.StateHalted)
		var failed uuid.UUID
		for _, s := range r.Steps {
			if s.Step == c.step && s.State == pipeline.StateFailed {
				failed = s.Item
			}
		}
		want := pipeline.Halt{Run: run, Pipeline: r.Pipeline, Step: c.step, Item: failed, Reason: pipeline.ReasonAttemptsExhausted}
		if r.Halt == nil {
			e.t.Fatalf("%s: Get of the halted run has no Halt", c.step)
		}
		got := *r.Halt
		if !strings.Contains(got.Detail, c.detail) || got.ID == uuid.Nil || failed == uuid.Nil {
			e.t.Errorf("%s: Get's halt detail %q (id %s), want the step's last error %q; failed item %s", c.step, got.Detail, got.ID, c.detail, failed)
		}
		want.ID, want.Detail = got.ID, got.Detail
		if got != want {
			e.t.Errorf("%s: Get's halt %+v, want %+v", c.step, got, want)
		}
		cr, err := e.store.GetRun(e.ctx, run)
		if err != nil || cr.HaltDetail != got.Detail || cr.HaltItemID != failed || cr.HaltID != got.ID {
			e.t.Errorf("%s: GetRun's halt (%q, item %s, id %s), %v; want Get's (%q, item %s, id %s)", c.step, cr.HaltDetail, cr.HaltItemID, cr.HaltID, err, got.Detail, failed, got.ID)
		}
		var h pipeline.Halt
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			mu.Lock()
			d, ok := delivered[run]
			mu.Unlock()
			if ok {
				h = d
				break
			}
			if time.Now().After(deadline) {
				e.t.Fatalf("%s: OnHalt not called within a minute", c.step)
			}
		}
		if h != got {
			e.t.Errorf("%s: OnHalt got %+v, Get shows %+v: one halt, two records", c.step, h, got)
		}
	}
}

// retainedHaltRevives: a run halts because its collapse died; a
// retention pass long after (on a store whose database clock is two hours
// ahead) deletes none of the halted run's items or its fan-out, so that
// Revive runs the collapse again and the run completes. Once it has, a
// pass deletes them.
func retainedHaltRevives(e *env) {
	var mu sync.Mutex
	broken := true
	collapse := func(ctx context.Context, r *pipeline.Results[int]) (int, error) {
		mu.Lock()
		b := broken
		mu.Unlock()
		if b {
			return 0, pipeline.Permanent(errors.New("collapse is broken"))
		}
		return total(ctx, r)
	}
	p := define(e, "retained", pipeline.Expand("kids", upTo, add("child", 0), collapse))
	eng := e.engine(pipeline.EngineOptions{}, p)
	run := e.trigger(eng, p, 4)
	before := e.waitRun(eng, run, pipeline.StateHalted)
	// The expand, its four children and the dead collapse.
	if len(before.Steps) != 6 {
		e.t.Fatalf("halted run has %d steps, want 6:\n%s", len(before.Steps), steps(before))
	}
	later, err := core.Open(e.ctx, e.db, e.d, core.Options{Prefix: e.prefix, ClockOffset: 2 * time.Hour})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := later.Purge(e.ctx, core.PurgeParams{OlderThan: time.Hour}); err != nil {
		e.t.Fatal(err)
	}
	kept, err := eng.Get(e.ctx, run)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(kept.Steps) != len(before.Steps) {
		e.t.Fatalf("retention left %d of the halted run's %d steps:\n%s", len(kept.Steps), len(before.Steps), steps(kept))
	}
	mu.Lock()
	broken = false
	mu.Unlock()
	if err := eng.Revive(e.ctx, run); err != nil {
		e.t.Fatal(err)
	}
	done := e.waitRun(eng, run, pipeline.StateCompleted)
	if got := output[int](e, done); got != 0+1+2+3 {
		e.t.Errorf("output %d, want 6", got)
	}
	// Finished, the run's steps go by the usual rule: all of them are
	// older than the hour by the later clock.
	r, err := later.Purge(e.ctx, core.PurgeParams{OlderThan: time.Hour})
	if err != nil {
		e.t.Fatal(err)
	}
	if r.Items < len(done.Steps) || r.Barriers != 1 {
		e.t.Errorf("retention after the run completed = %+v, want its %d steps and its fan-out", r, len(done.Steps))
	}
}
