package pipelinesuite

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/pipeline"
)

// haltThenRevive: a step that fails its last attempt halts the run;
// OnHalt gets the halt after it committed, again after it failed (with the
// same id, to deduplicate by); Revive runs the failed step again (not the
// completed one before it) and the run completes, the failed attempts
// still in the step's history and the step's idempotency key unchanged.
func haltThenRevive(e *env) {
	var broken atomic.Bool
	broken.Store(true)
	var firsts atomic.Int32
	var mu sync.Mutex
	var keys []string
	var halts []pipeline.Halt
	first := pipeline.Step("first", func(_ context.Context, n int) (int, error) { firsts.Add(1); return n + 1, nil })
	flaky := pipeline.Step("flaky", func(ctx context.Context, n int) (int, error) {
		info, _ := pipeline.StepInfo(ctx)
		mu.Lock()
		keys = append(keys, info.IdempotencyKey)
		mu.Unlock()
		if broken.Load() {
			return 0, fmt.Errorf("broken at attempt %d", info.Attempt)
		}
		return n * 10, nil
	}, pipeline.StepOptions{MaxAttempts: 2})
	p := define(e, "halting", pipeline.Then(first, pipeline.Then(flaky, add("last", 1))))
	eng := e.engine(pipeline.EngineOptions{OnHalt: func(_ context.Context, h pipeline.Halt) error {
		mu.Lock()
		defer mu.Unlock()
		halts = append(halts, h)
		if len(halts) == 1 {
			return errors.New("the hook's first delivery fails after its effect")
		}
		return nil
	}}, p)
	run := e.trigger(eng, p, 1)
	r := e.waitRun(eng, run, pipeline.StateHalted)
	if r.Halt == nil || r.Halt.Reason != pipeline.ReasonAttemptsExhausted {
		e.t.Fatalf("halt %+v, want attempts_exhausted", r.Halt)
	}
	var fl pipeline.StepRun
	for _, s := range r.Steps {
		if s.Step == "flaky" {
			fl = s
		}
	}
	if fl.State != pipeline.StateFailed || len(fl.Attempts) != 2 || !strings.Contains(fl.Attempts[1].Error, "broken at attempt 2") {
		e.t.Errorf("flaky: %s with history %+v, want failed after 2 attempts with their errors", fl.State, fl.Attempts)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		n := len(halts)
		mu.Unlock()
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("OnHalt called %d times, want a failed delivery and its retry", n)
		}
	}
	mu.Lock()
	h := halts[0]
	if halts[1].ID != h.ID || h.ID != r.Halt.ID || h.Run != run || h.Step != "flaky" || h.Pipeline != "halting" {
		e.t.Errorf("deliveries %+v, want the halt %s of step flaky twice", halts, r.Halt.ID)
	}
	mu.Unlock()

	broken.Store(false)
	if err := eng.Revive(e.ctx, run); err != nil {
		e.t.Fatal(err)
	}
	r = e.waitRun(eng, run, pipeline.StateCompleted)
	if got := output[int](e, r); got != 21 {
		e.t.Errorf("output %d, want 21", got)
	}
	if n := firsts.Load(); n != 1 {
		e.t.Errorf("the completed first step ran %d times, want once", n)
	}
	for _, s := range r.Steps {
		if s.Step == "flaky" && (len(s.Attempts) < 2 || !strings.Contains(s.Attempts[0].Error, "broken at attempt 1")) {
			e.t.Errorf("flaky's history after revive: %+v, want its two failed attempts kept", s.Attempts)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(keys) != 3 || keys[0] != keys[1] || keys[1] != keys[2] {
		e.t.Errorf("idempotency keys %q, want one key for the three runs of the step", keys)
	}
	if len(halts) != 2 {
		e.t.Errorf("OnHalt called %d times, want 2 (no halt after the revive)", len(halts))
	}
}

// reviveInsideFanOut: a child of an expand inside a divide fails; the
// run halts once the fan-outs around it have nothing else to do; Revive
// runs the failed child again, re-arms the fan-ins above it, and the run
// completes, no completed child having run twice.
func reviveInsideFanOut(e *env) {
	var broken atomic.Bool
	broken.Store(true)
	var mu sync.Mutex
	ran := map[int]int{}
	child := pipeline.Step("child", func(_ context.Context, n int) (int, error) {
		mu.Lock()
		ran[n]++
		mu.Unlock()
		if n == 3 && broken.Load() {
			return 0, pipeline.Permanent(errors.New("child 3 is broken"))
		}
		return n, nil
	})
	ex := pipeline.Expand("kids", upTo, child, total)
	p := define(e, "revfan", pipeline.Divide("split", []pipeline.Flow[int, int]{ex, add("side", 0)}, sum))
	eng := e.engine(pipeline.EngineOptions{}, p)
	run := e.trigger(eng, p, 6)
	r := e.waitRun(eng, run, pipeline.StateHalted)
	if r.Halt == nil || r.Halt.Reason != pipeline.ReasonAttemptsExhausted {
		e.t.Errorf("halt %+v, want attempts_exhausted", r.Halt)
	}
	broken.Store(false)
	if err := eng.Revive(e.ctx, run); err != nil {
		e.t.Fatal(err)
	}
	r = e.waitRun(eng, run, pipeline.StateCompleted)
	if got := output[int](e, r); got != 0+1+2+3+4+5+6 {
		e.t.Errorf("output %d, want 21", got)
	}
	mu.Lock()
	defer mu.Unlock()
	for n, c := range ran {
		if want := map[bool]int{true: 2, false: 1}[n == 3]; c != want {
			e.t.Errorf("child %d ran %d times, want %d", n, c, want)
		}
	}
}

// reviveStep: ReviveStep runs one failed step again, the steps of the
// fan-out it belongs to that completed are not run again, and the run
// completes.
func reviveStep(e *env) {
	var broken atomic.Bool
	broken.Store(true)
	var runs atomic.Int32
	child := pipeline.Step("child", func(_ context.Context, n int) (int, error) {
		runs.Add(1)
		if n == 1 && broken.Load() {
			return 0, pipeline.Permanent(errors.New("child 1 is broken"))
		}
		return n, nil
	})
	p := define(e, "revstep", pipeline.Then(pipeline.Expand("kids", upTo, child, total), add("end", 100)))
	eng := e.engine(pipeline.EngineOptions{}, p)
	run := e.trigger(eng, p, 3)
	r := e.waitRun(eng, run, pipeline.StateHalted)
	var failed uuid.UUID
	for _, s := range r.Steps {
		if s.Step == "child" && s.State == pipeline.StateFailed {
			failed = s.Item
		}
	}
	if failed == uuid.Nil {
		e.t.Fatalf("no failed child; steps:\n%s", steps(r))
	}
	broken.Store(false)
	if err := eng.ReviveStep(e.ctx, run, failed); err != nil {
		e.t.Fatal(err)
	}
	r = e.waitRun(eng, run, pipeline.StateCompleted)
	if got := output[int](e, r); got != 103 {
		e.t.Errorf("output %d, want 103", got)
	}
	if n := runs.Load(); n != 4 {
		e.t.Errorf("children ran %d times, want 4 (three, and the failed one again)", n)
	}
}

// streamOverCap: a streaming source that goes on past its expand's cap
// halts the run with max_fanout_exceeded as soon as a page would cross
// it: no page past it is read or inserted, and the children already
// inserted are cancelled.
func streamOverCap(e *env) {
	var pages atomic.Int32
	source := func(_ context.Context, _ int, cursor string) (pipeline.Page[int], error) {
		pages.Add(1)
		from := 0
		if cursor != "" {
			from, _ = strconv.Atoi(cursor)
		}
		items := make([]int, 10)
		for i := range items {
			items[i] = from + i
		}
		return pipeline.Page[int]{Items: items, Next: strconv.Itoa(from + 10)}, nil // never done
	}
	hold := pipeline.Step("hold", func(ctx context.Context, n int) (int, error) {
		<-ctx.Done() // until cancelled
		return 0, ctx.Err()
	})
	p := define(e, "capped", pipeline.ExpandStream("stream", source, hold, total, pipeline.ExpandOptions{MaxFanout: 25}))
	eng := e.engine(pipeline.EngineOptions{}, p)
	run := e.trigger(eng, p, 0)
	r := e.waitRun(eng, run, pipeline.StateHalted)
	if r.Halt == nil || r.Halt.Reason != pipeline.ReasonMaxFanoutExceeded {
		e.t.Fatalf("halt %+v, want max_fanout_exceeded", r.Halt)
	}
	if n := pages.Load(); n != 3 {
		e.t.Errorf("the source was read %d times, want 3 (the third page crosses the cap)", n)
	}
	kids := 0
	for _, s := range r.Steps {
		if s.Step == "hold" {
			kids++
			if s.State != pipeline.StateCancelled {
				e.t.Errorf("child %s@%s is %s, want cancelled", s.Item, s.Path, s.State)
			}
		}
	}
	if kids != 20 {
		e.t.Errorf("%d children, want the 20 of the two pages within the cap", kids)
	}
}

// cancelRun: Cancel ends a running step's context, cancels every
// unfinished step, and the run ends cancelled.
func cancelRun(e *env) {
	started := make(chan struct{}, 8)
	stopped := make(chan error, 8)
	block := pipeline.Step("block", func(ctx context.Context, n int) (int, error) {
		started <- struct{}{}
		<-ctx.Done()
		stopped <- context.Cause(ctx)
		return 0, ctx.Err()
	})
	p := define(e, "cancel", pipeline.Then(pipeline.Divide("two", []pipeline.Flow[int, int]{block, add("quick", 1)}, sum), add("never", 1)))
	eng := e.engine(pipeline.EngineOptions{}, p)
	run := e.trigger(eng, p, 1)
	select {
	case <-started:
	case <-e.ctx.Done():
		e.t.Fatal("the blocking step never started")
	}
	if err := eng.Cancel(e.ctx, run); err != nil {
		e.t.Fatal(err)
	}
	select {
	case <-stopped:
	case <-e.ctx.Done():
		e.t.Fatal("the running step's context did not end")
	}
	r := e.waitRun(eng, run, pipeline.StateCancelled)
	for _, s := range r.Steps {
		switch {
		case s.Step == "never":
			e.t.Errorf("a step after the cancel ran: %+v", s)
		case s.State != pipeline.StateCancelled && s.State != pipeline.StateCompleted:
			e.t.Errorf("step %s is %s after the cancel", s.Step, s.State)
		}
	}
	if err := eng.Cancel(e.ctx, run); err != nil {
		e.t.Errorf("cancel again: %v", err)
	}
}

// triggerTx: a run triggered in a transaction that rolls back does not
// exist; one that commits runs; a key makes a trigger idempotent, typed
// (Pipeline.Trigger, TriggerTx) or not.
func triggerTx(e *env) {
	p := define(e, "tx", add("one", 1))
	eng := e.engine(pipeline.EngineOptions{}, p)
	tx, err := e.db.BeginTx(e.ctx, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	gone, err := eng.TriggerTx(e.ctx, tx, p, 1)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		e.t.Fatal(err)
	}
	if _, err := eng.Get(e.ctx, gone); !errors.Is(err, core.ErrNotFound) {
		e.t.Errorf("the rolled back run: %v, want ErrNotFound", err)
	}
	if tx, err = e.db.BeginTx(e.ctx, nil); err != nil {
		e.t.Fatal(err)
	}
	run, err := p.TriggerTx(e.ctx, eng, tx, 2, pipeline.TriggerOptions{Key: "order-7"})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		e.t.Fatal(err)
	}
	again, err := eng.Trigger(e.ctx, p, 5, pipeline.TriggerOptions{Key: "order-7"})
	if err != nil || again != run {
		e.t.Errorf("trigger with the same key: %s, %v; want %s", again, err, run)
	}
	typed, err := p.Trigger(e.ctx, eng, 5, pipeline.TriggerOptions{Key: "order-7"})
	if err != nil || typed != run {
		e.t.Errorf("typed trigger with the same key: %s, %v; want %s", typed, err, run)
	}
	if got := output[int](e, e.waitRun(eng, run, pipeline.StateCompleted)); got != 3 {
		e.t.Errorf("output %d, want 3", got)
	}
	if _, err := eng.Trigger(e.ctx, p, "not an int"); err == nil {
		e.t.Error("an input of the wrong type was accepted")
	}
	_ = uuid.Nil
}
