package pipelinesuite

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/pipeline"
)

// auditTable creates a table of one text column, step, dropped at the
// end of the test, for steps to write through their fences.
func (e *env) auditTable() string {
	e.t.Helper()
	table := e.prefix + "audit"
	if e.collect != nil {
		return table // Definitions builds the flows only
	}
	if _, err := e.db.ExecContext(e.ctx, "CREATE TABLE "+table+" (step VARCHAR(200) NOT NULL)"); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, stmt := range e.d.DropTable(table) {
			_, _ = e.db.ExecContext(ctx, stmt)
		}
	})
	return table
}

// audited lists the rows of an audit table, sorted.
func (e *env) audited(table string) []string {
	e.t.Helper()
	rows, err := e.db.QueryContext(e.ctx, "SELECT step FROM "+table+" ORDER BY step")
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

// lateFirst makes the first attempt of the function it guards overrun:
// it waits for its context to end (the step's Timeout) and then goes on
// as if nothing happened, so that whatever it returns or fences comes
// late. Later attempts run at once.
func lateFirst(ctx context.Context) {
	if info, _ := pipeline.StepInfo(ctx); info.Attempt == 1 {
		<-ctx.Done()
	}
}

// record fences the audit row of the step ctx runs, tagged with its
// attempt.
func record(ctx context.Context, e *env, table string) error {
	info, _ := pipeline.StepInfo(ctx)
	row := fmt.Sprintf("%s#%d", info.IdempotencyKey[strings.Index(info.IdempotencyKey, "/")+1:], info.Attempt)
	return pipeline.Fence(ctx, func(ctx context.Context, f *core.Fenced) error {
		_, err := f.ExecContext(ctx, e.d.Rebind("INSERT INTO "+table+" (step) VALUES (?)"), row)
		return err
	})
}

// stepTimeouts: every kind of step, with a Timeout of its own, overruns
// its first attempt: a route's choice, an expand's list, its children,
// its collapse, a divide's branches and its combine, an await's
// function, a wait's condition. Each first attempt counts as a timeout,
// what it fenced does not commit (the audit rows are the completing
// attempts' only), and the run completes with the later attempts'
// outputs; a step with one attempt that overruns halts its run.
func stepTimeouts(e *env) {
	audit := e.auditTable()
	// Attempts after the first run at once, but a loaded machine can hold
	// one past the timeout too: it counts as one more timeout.
	quick := pipeline.StepOptions{Timeout: 2 * time.Second, MaxAttempts: 10, Backoff: pipeline.Backoff{Initial: 10 * time.Millisecond}}
	child := pipeline.Step("child", func(ctx context.Context, n int) (int, error) {
		lateFirst(ctx)
		return n + 1, record(ctx, e, audit)
	}, quick)
	fan := pipeline.Expand("fan", func(ctx context.Context, n int) ([]int, error) {
		lateFirst(ctx)
		return upTo(ctx, n)
	}, child, func(ctx context.Context, r *pipeline.Results[int]) (int, error) {
		lateFirst(ctx)
		t, err := total(ctx, r)
		if err != nil {
			return 0, err
		}
		return t, record(ctx, e, audit)
	}, pipeline.ExpandOptions{StepOptions: quick})
	pick := pipeline.Route("pick", func(ctx context.Context, n int) (string, error) {
		lateFirst(ctx)
		return "fan", nil
	}, map[string]pipeline.Flow[int, int]{"fan": fan}, quick)
	branch := func(name string, k int) pipeline.Flow[int, int] {
		return pipeline.Step(name, func(ctx context.Context, n int) (int, error) {
			lateFirst(ctx)
			return n + k, record(ctx, e, audit)
		}, quick)
	}
	split := pipeline.Divide("split", []pipeline.Flow[int, int]{branch("left", 1), branch("right", 2)},
		func(ctx context.Context, outs []int) (int, error) {
			lateFirst(ctx)
			return outs[0] * outs[1], record(ctx, e, audit)
		}, quick)
	gate := pipeline.Await("gate", "go", 0, func(ctx context.Context, n int, _ struct{}, _ bool) (int, error) {
		lateFirst(ctx)
		return n, record(ctx, e, audit)
	}, quick)
	until := pipeline.WaitUntil("until", func(ctx context.Context, n int) (int, bool, error) {
		lateFirst(ctx)
		return n, true, nil
	}, pipeline.Flow[int, int]{}, pipeline.WaitOptions{StepOptions: quick, Every: pipeline.Backoff{Initial: time.Second}})
	p := define(e, "timeouts", pipeline.Then(pipeline.Then(pipeline.Then(pick, split), gate), until))
	hangs := define(e, "hangs", pipeline.Step("hang", func(ctx context.Context, n int) (int, error) {
		<-ctx.Done()
		return n, nil
	}, pipeline.StepOptions{Timeout: time.Second, MaxAttempts: 1}))
	eng := e.engine(pipeline.EngineOptions{}, p, hangs)
	halted := e.trigger(eng, hangs, 1)
	run := e.trigger(eng, p, 3)
	if err := eng.Signal(e.ctx, run, "go", struct{}{}); err != nil {
		e.t.Fatal(err)
	}
	r := e.waitRun(eng, run, pipeline.StateCompleted)
	// children 1+2+3 = 6; (6+1)*(6+2) = 56.
	if got := output[int](e, r); got != 56 {
		e.t.Errorf("output %d, want 56", got)
	}
	var want []string
	for _, s := range r.Steps {
		if s.Step == "split" && s.Role == "" {
			continue // the divide's fan-out runs no function of the flow's
		}
		timeouts := 0
		for _, a := range s.Attempts {
			// The worker records its own timeout; on a loaded machine
			// the claim's lease can run out first, and the reaper's
			// timeout path records it instead.
			if strings.Contains(a.Error, "deadline passed") || a.Outcome == core.OutcomeTimeout {
				timeouts++
			}
		}
		if s.Attempt < 2 || len(s.Attempts) != s.Attempt-1 || timeouts != len(s.Attempts) {
			e.t.Errorf("step %s/%s@%s: attempt %d, history %+v; want a later attempt, after timeouts only", s.Step, s.Role, s.Path, s.Attempt, s.Attempts)
		}
		if s.Step != "pick" && s.Step != "until" && !(s.Step == "fan" && s.Role == "") {
			// Every function but a choice, a list and a condition fenced
			// its row.
			key := s.Step
			if s.Role != "" {
				key += "/" + s.Role
			}
			if s.Path != "" {
				key += "@" + s.Path
			}
			want = append(want, fmt.Sprintf("%s#%d", key, s.Attempt))
		}
	}
	sort.Strings(want)
	if got := e.audited(audit); len(want) != 8 || fmt.Sprint(got) != fmt.Sprint(want) {
		e.t.Errorf("audit rows %q, want %q: the completing attempts' only, once each", got, want)
	}
	h := e.waitRun(eng, halted, pipeline.StateHalted)
	if h.Halt == nil || h.Halt.Reason != pipeline.ReasonAttemptsExhausted || !strings.Contains(h.Halt.Detail, "deadline") {
		e.t.Errorf("the run whose one attempt timed out halted with %+v, want attempts exhausted by a deadline", h.Halt)
	}
}

// stepBackoff: a step's failed attempts wait its Backoff, on the database
// clock (the item's available_at after each failure, less the failure's
// time in its history), growing by its Factor up to its Max; a step
// without one waits the pipeline's Options.Backoff. Each attempt reads
// its own item, which its claim left as the failure before it set it.
func stepBackoff(e *env) {
	type gap struct {
		step    string
		attempt int
		wait    time.Duration
	}
	var mu sync.Mutex
	var gaps []gap
	flaky := func(name string, fails int, opts pipeline.StepOptions) pipeline.Flow[int, int] {
		return pipeline.Step(name, func(ctx context.Context, n int) (int, error) {
			info, _ := pipeline.StepInfo(ctx)
			if info.Attempt > 1 {
				it, err := e.store.Get(ctx, stepItem(ctx, e, info))
				if err != nil {
					return 0, err
				}
				hist, err := e.store.Attempts(ctx, it.ID)
				if err != nil || len(hist) == 0 {
					return 0, fmt.Errorf("history %v: %w", hist, err)
				}
				mu.Lock()
				gaps = append(gaps, gap{name, info.Attempt - 1, it.AvailableAt.Sub(hist[len(hist)-1].EndedAt)})
				mu.Unlock()
			}
			if info.Attempt <= fails {
				return 0, fmt.Errorf("attempt %d fails", info.Attempt)
			}
			return n + 1, nil
		}, opts)
	}
	own := pipeline.StepOptions{MaxAttempts: 5, Backoff: pipeline.Backoff{Initial: time.Second, Factor: 10, Max: 2 * time.Second}}
	p := define(e, "backoff", pipeline.Then(flaky("own", 2, own), flaky("inherits", 1, pipeline.StepOptions{})),
		pipeline.Options{Backoff: pipeline.Backoff{Initial: 3 * time.Second, Factor: 1}})
	eng := e.engine(pipeline.EngineOptions{}, p)
	r := e.waitRun(eng, e.trigger(eng, p, 1), pipeline.StateCompleted)
	if got := output[int](e, r); got != 3 {
		e.t.Errorf("output %d", got)
	}
	want := []gap{{"own", 1, time.Second}, {"own", 2, 2 * time.Second}, {"inherits", 1, 3 * time.Second}}
	mu.Lock()
	defer mu.Unlock()
	if len(gaps) != len(want) {
		e.t.Fatalf("waits %+v, want %+v", gaps, want)
	}
	for i, g := range gaps {
		// available_at and the attempt's end are written by two statements
		// of one transaction, each at its own database time.
		if w := want[i]; g.step != w.step || g.attempt != w.attempt || g.wait < w.wait-400*time.Millisecond || g.wait > w.wait+400*time.Millisecond {
			e.t.Errorf("wait %d: %+v, want %+v (within 400 ms)", i, g, w)
		}
	}
}

// stepItem finds the item of the step execution info names, from its
// run's items.
func stepItem(ctx context.Context, e *env, info pipeline.Info) uuid.UUID {
	items, err := e.store.RunItems(ctx, core.RunItemsParams{Run: info.Run, Limit: 100})
	if err != nil {
		e.t.Error(err)
		return uuid.Nil
	}
	for _, it := range items {
		var env struct {
			Node string `json:"node"`
		}
		if it.State == core.StateClaimed && jsonUnmarshal(it.Payload, &env) == nil && env.Node == info.Step {
			return it.ID
		}
	}
	return uuid.Nil
}

// stepDelay: a step's item, wherever it is made (the trigger, the step
// before it, a divide's branches, an expand's children), becomes
// claimable its Delay after it was made, on the database clock, and a
// step without a Delay at once.
func stepDelay(e *env) {
	const delay = 700 * time.Millisecond
	later := pipeline.StepOptions{Delay: delay}
	inc := func(name string, opts pipeline.StepOptions) pipeline.Flow[int, int] {
		return pipeline.Step(name, func(_ context.Context, n int) (int, error) { return n + 1, nil }, opts)
	}
	flow := pipeline.Then(pipeline.Then(pipeline.Then(inc("first", later), inc("next", later)),
		pipeline.Divide("split", []pipeline.Flow[int, int]{inc("left", later), inc("right", pipeline.StepOptions{})}, sum)),
		pipeline.Expand("fan", upTo, inc("each", later), total))
	p := define(e, "delays", flow)
	eng := e.engine(pipeline.EngineOptions{}, p)
	r := e.waitRun(eng, e.trigger(eng, p, 0), pipeline.StateCompleted)
	// 0 -> 1 -> 2 -> (3 + 3) = 6 -> sum of 1..6 = 21.
	if got := output[int](e, r); got != 21 {
		e.t.Errorf("output %d, want 21", got)
	}
	delayed := map[string]bool{"first": true, "next": true, "left": true, "each": true}
	for _, s := range r.Steps {
		it, err := e.store.Get(e.ctx, s.Item)
		if err != nil {
			e.t.Fatal(err)
		}
		want := time.Duration(0)
		if delayed[s.Step] && s.Role == "" {
			want = delay
		}
		if got := it.AvailableAt.Sub(it.CreatedAt); got < want-50*time.Millisecond || got > want+50*time.Millisecond {
			e.t.Errorf("step %s/%s@%s: claimable %v after it was made, want %v", s.Step, s.Role, s.Path, got, want)
		}
	}
}
