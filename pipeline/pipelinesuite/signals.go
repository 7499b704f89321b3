package pipelinesuite

import (
	"context"
	"time"

	"github.com/plenumdb/plenum/pipeline"
)

type approval struct {
	By string `json:"by"`
}

// approve is a flow that waits for the signal "approve", with timeout.
func approve(timeout time.Duration) pipeline.Flow[int, string] {
	return pipeline.Await("approve", "approve", timeout, func(_ context.Context, n int, a approval, timedOut bool) (string, error) {
		if timedOut {
			return "timed out", nil
		}
		return "approved by " + a.By, nil
	})
}

// signalBeforeWait: a signal sent while the run is still on the step
// before the wait is kept, and the wait takes it at once.
func signalBeforeWait(e *env) {
	release := make(chan struct{})
	gate := pipeline.Step("gate", func(ctx context.Context, n int) (int, error) {
		select {
		case <-release:
			return n, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	})
	p := define(e, "early", pipeline.Then(gate, approve(0)))
	eng := e.engine(pipeline.EngineOptions{}, p)
	run := e.trigger(eng, p, 1)
	if err := eng.Signal(e.ctx, run, "approve", approval{By: "ada"}); err != nil {
		e.t.Fatal(err)
	}
	close(release)
	r := e.waitRun(eng, run, pipeline.StateCompleted)
	if got := output[string](e, r); got != "approved by ada" {
		e.t.Errorf("output %q", got)
	}
}

// signalAfterWait: the run waits (Get says so) until the signal comes;
// a signal sent twice is delivered once. The step that takes the signal
// finishes only once both are sent: a run already finished refuses the
// second, which would leave the duplicate unsent.
func signalAfterWait(e *env) {
	sent := make(chan struct{})
	approveAfterBoth := pipeline.Await("approve", "approve", 0, func(ctx context.Context, _ int, a approval, _ bool) (string, error) {
		select {
		case <-sent:
			return "approved by " + a.By, nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	p := define(e, "late", pipeline.Then(add("first", 0), approveAfterBoth))
	eng := e.engine(pipeline.EngineOptions{}, p)
	run := e.trigger(eng, p, 1)
	e.waitRun(eng, run, pipeline.StateWaiting)
	for range 2 {
		if err := eng.Signal(e.ctx, run, "approve", approval{By: "grace"}); err != nil {
			e.t.Fatal(err)
		}
	}
	close(sent)
	r := e.waitRun(eng, run, pipeline.StateCompleted)
	if got := output[string](e, r); got != "approved by grace" {
		e.t.Errorf("output %q", got)
	}
	sigs, err := e.store.Signals(e.ctx, run)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(sigs) != 1 || sigs[0].TakenBy == [16]byte{} {
		e.t.Errorf("signals %+v, want one, taken", sigs)
	}
}

// awaitTimesOut: without a signal, the step runs with timedOut once its
// timeout passed.
func awaitTimesOut(e *env) {
	p := define(e, "timeout", approve(time.Second))
	eng := e.engine(pipeline.EngineOptions{}, p)
	r := e.waitRun(eng, e.trigger(eng, p, 1), pipeline.StateCompleted)
	if got := output[string](e, r); got != "timed out" {
		e.t.Errorf("output %q", got)
	}
}
