package pipelinesuite

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/plenumdb/plenum/pipeline"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

func add(name string, k int) pipeline.Flow[int, int] {
	return pipeline.Step(name, func(_ context.Context, n int) (int, error) { return n + k, nil })
}

func double(name string) pipeline.Flow[int, int] {
	return pipeline.Step(name, func(_ context.Context, n int) (int, error) { return 2 * n, nil })
}

// upTo lists 0 .. n-1.
func upTo(_ context.Context, n int) ([]int, error) {
	xs := make([]int, n)
	for i := range xs {
		xs[i] = i
	}
	return xs, nil
}

func total(ctx context.Context, r *pipeline.Results[int]) (int, error) {
	t := 0
	err := r.Each(ctx, func(x pipeline.Result[int]) error { t += x.Value; return nil })
	return t, err
}

func sum(_ context.Context, xs []int) (int, error) {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t, nil
}

// chain: three steps, each output the next one's input; the steps show in
// Get in order, completed, with their outputs.
func chain(e *env) {
	p := define(e, "chain", pipeline.Then(add("a", 1), pipeline.Then(double("b"), add("c", 3))))
	eng := e.engine(pipeline.EngineOptions{}, p)
	r := e.waitRun(eng, e.trigger(eng, p, 4), pipeline.StateCompleted)
	if got := output[int](e, r); got != (4+1)*2+3 {
		e.t.Errorf("output %d, want 13", got)
	}
	var names []string
	for _, s := range r.Steps {
		names = append(names, s.Step)
		if s.State != pipeline.StateCompleted || s.Attempt != 1 {
			e.t.Errorf("step %s: %s at attempt %d", s.Step, s.State, s.Attempt)
		}
	}
	if strings.Join(names, ",") != "a,b,c" {
		e.t.Errorf("steps %v, want a,b,c", names)
	}
	if r.Steps[1].Output == nil || string(r.Steps[1].Output) != "10" {
		e.t.Errorf("b's output %s, want 10", r.Steps[1].Output)
	}
}

// route: the choice sends the input down one flow of several.
func route(e *env) {
	parity := pipeline.Route("parity", func(_ context.Context, n int) (string, error) {
		if n%2 == 0 {
			return "even", nil
		}
		return "odd", nil
	}, map[string]pipeline.Flow[int, int]{
		"even": pipeline.Then(double("twice"), add("plus-one", 1)),
		"odd":  add("plus-hundred", 100),
	})
	p := define(e, "route", pipeline.Then(parity, add("after", 1000)))
	eng := e.engine(pipeline.EngineOptions{}, p)
	even, odd := e.trigger(eng, p, 4), e.trigger(eng, p, 3)
	if got := output[int](e, e.waitRun(eng, even, pipeline.StateCompleted)); got != 1009 {
		e.t.Errorf("even: %d, want 1009", got)
	}
	r := e.waitRun(eng, odd, pipeline.StateCompleted)
	if got := output[int](e, r); got != 1103 {
		e.t.Errorf("odd: %d, want 1103", got)
	}
	for _, s := range r.Steps {
		if s.Step == "twice" {
			e.t.Errorf("the odd run ran the even route")
		}
	}
}

// routeUnmatchedHalts: a choice that names no route halts the run with
// no_route_matched, and the halt shows in Get.
func routeUnmatchedHalts(e *env) {
	p := define(e, "noroute", pipeline.Route("pick", func(context.Context, int) (string, error) { return "nowhere", nil },
		map[string]pipeline.Flow[int, int]{"somewhere": add("x", 1)}))
	eng := e.engine(pipeline.EngineOptions{}, p)
	r := e.waitRun(eng, e.trigger(eng, p, 1), pipeline.StateHalted)
	if r.Halt == nil || r.Halt.Reason != pipeline.ReasonNoRouteMatched || !strings.Contains(r.Halt.Detail, "nowhere") {
		e.t.Errorf("halt %+v, want no_route_matched naming the choice", r.Halt)
	}
}

// divideCombines: every branch runs on the input; combine gets their
// outputs in the order of the branches, whatever order they finish in.
func divideCombines(e *env) {
	branches := []pipeline.Flow[int, string]{}
	for i := range 5 {
		branches = append(branches, pipeline.Step(fmt.Sprintf("b%d", i), func(_ context.Context, n int) (string, error) {
			return fmt.Sprintf("%d:%d", i, n), nil
		}))
	}
	p := define(e, "divide", pipeline.Divide("fan", branches, func(_ context.Context, outs []string) (string, error) {
		return strings.Join(outs, ","), nil
	}))
	eng := e.engine(pipeline.EngineOptions{}, p)
	r := e.waitRun(eng, e.trigger(eng, p, 7), pipeline.StateCompleted)
	if got := output[string](e, r); got != "0:7,1:7,2:7,3:7,4:7" {
		e.t.Errorf("combined %q", got)
	}
}

// expandLarge: an expand of 10,000 children, then a collapse that reads
// their outputs by keyset pages.
func expandLarge(e *env) {
	const n = 10_000
	p := define(e, "large", pipeline.Expand("each", upTo, double("twice"), func(ctx context.Context, r *pipeline.Results[int]) (int, error) {
		seen := make([]bool, r.Len())
		t := 0
		err := r.Each(ctx, func(x pipeline.Result[int]) error {
			if x.Index < 0 || x.Index >= len(seen) || seen[x.Index] || x.Value != 2*x.Index {
				return fmt.Errorf("result %+v out of place", x)
			}
			seen[x.Index] = true
			t += x.Value
			return nil
		})
		if err == nil && slices.Contains(seen, false) {
			err = fmt.Errorf("a result is missing")
		}
		return t, err
	}))
	eng := e.engine(pipeline.EngineOptions{}, p)
	r := e.waitRun(eng, e.trigger(eng, p, n), pipeline.StateCompleted)
	if got := output[int](e, r); got != n*(n-1) {
		e.t.Errorf("collapsed %d, want %d", got, n*(n-1))
	}
	if len(r.Steps) != n+2 {
		e.t.Errorf("%d steps, want the expand, %d children and the collapse", len(r.Steps), n)
	}
}

// expandInsideDivide: one branch of a divide expands and collapses; the
// combine waits for the collapse, not for the expand's children.
func expandInsideDivide(e *env) {
	squares := pipeline.Expand("squares", upTo, pipeline.Step("square", func(_ context.Context, n int) (int, error) { return n * n, nil }), total)
	branch := pipeline.Then(add("prep", 0), pipeline.Then(squares, add("post", 1000)))
	p := define(e, "expdiv", pipeline.Divide("split", []pipeline.Flow[int, int]{branch, double("other")}, sum))
	eng := e.engine(pipeline.EngineOptions{}, p)
	r := e.waitRun(eng, e.trigger(eng, p, 20), pipeline.StateCompleted)
	// squares of 0..19 sum to 2470; +1000; other is 40.
	if got := output[int](e, r); got != 2470+1000+40 {
		e.t.Errorf("output %d, want %d", got, 2470+1000+40)
	}
}

// nestedCollapses: an expand in a divided branch in an expand, with
// chains between: each collapse gets its own expand's children only.
func nestedCollapses(e *env) {
	inner := pipeline.Expand("inner", upTo, pipeline.Then(add("i1", 1), double("i2")), total)
	branch := pipeline.Then(add("b0", 0), pipeline.Then(inner, add("b2", 0)))
	div := pipeline.Divide("div", []pipeline.Flow[int, int]{branch, add("other", 0)}, sum)
	outer := pipeline.Expand("outer", func(_ context.Context, n int) ([]int, error) { return []int{n, n + 1, n + 2}, nil },
		pipeline.Then(div, add("after", 0)), total)
	p := define(e, "nested", pipeline.Then(outer, add("end", 0)))
	eng := e.engine(pipeline.EngineOptions{}, p)
	r := e.waitRun(eng, e.trigger(eng, p, 3), pipeline.StateCompleted)
	// For element m: inner sums 2*(i+1) over i < m = m*(m+1); other is m.
	want := 0
	for _, m := range []int{3, 4, 5} {
		want += m*(m+1) + m
	}
	if got := output[int](e, r); got != want {
		e.t.Errorf("output %d, want %d", got, want)
	}
	collapses := 0
	for _, s := range r.Steps {
		if s.Role == "collapse" {
			collapses++
		}
	}
	if collapses != 4 {
		e.t.Errorf("%d collapses, want 4 (three inner, one outer)", collapses)
	}
}
