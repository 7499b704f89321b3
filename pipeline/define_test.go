package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/core"
)

func inc(name string) Flow[int, int] {
	return Step(name, func(_ context.Context, n int) (int, error) { return n + 1, nil })
}

func sum(_ context.Context, r *Results[int]) (int, error) {
	t := 0
	err := r.Each(context.Background(), func(x Result[int]) error { t += x.Value; return nil })
	return t, err
}

func list(_ context.Context, n int) ([]int, error) { return make([]int, n), nil }

func add(_ context.Context, xs []int) (int, error) {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t, nil
}

func TestDefine_ReportsEveryProblem(t *testing.T) {
	t.Parallel()
	bad := Then(
		Then(Step[int, int]("", nil), inc("a")),
		Then(inc("a"), Divide[int, int, int]("d", nil, nil)),
	)
	_, err := Define("p p", Then(bad, Route[int, int]("r", nil, nil)))
	if !errors.Is(err, ErrInvalidDefinition) {
		t.Fatalf("err %v, want ErrInvalidDefinition", err)
	}
	for _, want := range []string{
		`pipeline name "p p" has characters`,
		"step name is empty",
		"the step's function is nil",
		`name "a" is used twice`,
		"the divide's combine function is nil",
		"a divide with no branches",
		"the route's choose function is nil",
		"a route with no routes",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error misses %q:\n%v", want, err)
		}
	}
	var de *DefinitionError
	if !errors.As(err, &de) || de.Pipeline != "p p" {
		t.Errorf("errors.As: %#v", de)
	}
}

func TestDefine_RefusesZeroFlowAndBadOptions(t *testing.T) {
	t.Parallel()
	_, err := Define("p", Then(Then(Then(inc("a"), Flow[int, int]{}), Sleep[int]("nap", 0)), SleepUntil[int]("until", nil)), Options{MaxFanout: -1, Version: -2})
	for _, want := range []string{"a zero Flow", "Options.MaxFanout is -1", "Options.Version is -2",
		"at p > nap: the sleep's duration is 0s", "at p > until: the sleep's duration is 0s"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error misses %q: %v", want, err)
		}
	}
}

func TestDefine_CapsNestingDepth(t *testing.T) {
	t.Parallel()
	f := inc("leaf")
	for i := range 3 {
		f = Expand("e"+string(rune('0'+i)), list, f, sum)
	}
	if _, err := Define("deep", f, Options{MaxDepth: 3}); err != nil {
		t.Fatalf("depth 3 within 3: %v", err)
	}
	_, err := Define("deep", f, Options{MaxDepth: 2})
	if err == nil || !strings.Contains(err.Error(), "nests expands and divides 3 deep") {
		t.Fatalf("depth 3 over 2: %v", err)
	}
}

// TestNext_EachJoinIsItsOwnFanOuts builds an expand inside a divided
// branch inside an expand, with chains between, and checks where each
// node's output goes: a branch's end arrives at the barrier of the
// fan-out that made it (the one whose join is its own), never at one
// above.
func TestNext_EachJoinIsItsOwnFanOuts(t *testing.T) {
	t.Parallel()
	inner := Expand("inner", list, Then(inc("i1"), inc("i2")), sum)
	branch := Then(inc("b0"), Then(inner, inc("b2")))
	div := Divide("div", []Flow[int, int]{branch, inc("other")}, add)
	outer := Expand("outer", list, Then(div, inc("after-div")), sum)
	p, err := Define("nest", Then(inc("start"), Then(outer, inc("end"))))
	if err != nil {
		t.Fatal(err)
	}
	n := p.def.nodes
	for _, c := range []struct {
		node, want string
	}{
		{"start", "start outer"},
		{"i1", "start i2"},
		{"i2", "arrive"}, // at inner's barrier: inner's collapse is the join
		{"inner", "start b2"},
		{"b0", "start inner"},
		{"b2", "arrive"}, // at div's barrier
		{"other", "arrive"},
		{"div", "start after-div"},
		{"after-div", "arrive"}, // at outer's barrier
		{"outer", "start end"},
		{"end", "finish"},
	} {
		a := next(n[c.node])
		got := "finish"
		switch {
		case a.start != nil:
			got = "start " + a.start.name
		case a.arrive:
			got = "arrive"
		}
		if got != c.want {
			t.Errorf("after %s: %s, want %s", c.node, got, c.want)
		}
	}
	if d := n["i1"].depth; d != 3 {
		t.Errorf("i1 at depth %d, want 3", d)
	}
	if e := entry(n["div"].branches[0]); e.name != "b0" {
		t.Errorf("branch 0 starts with %s", e.name)
	}
}

// A step's flow options are checked by Define, each problem naming the
// field and the step.
func TestDefine_RefusesBadFlowOptions(t *testing.T) {
	t.Parallel()
	key := func(json.RawMessage) string { return "k" }
	step := func(name string, o StepOptions) Flow[int, int] {
		return Step(name, func(_ context.Context, n int) (int, error) { return n, nil }, o)
	}
	_, err := Define("p", Then(Then(
		step("both", StepOptions{FlowKey: key, RunFlowKey: key}),
		step("unkeyed-cost", StepOptions{Cost: 2})),
		step("huge-cost", StepOptions{FlowKey: key, Cost: core.MaxCost + 1})))
	for _, want := range []string{
		"at p > both: StepOptions.FlowKey and RunFlowKey are both set",
		"at p > unkeyed-cost: StepOptions.Cost is set without a FlowKey or RunFlowKey",
		"at p > huge-cost: StepOptions.Cost is 1048577",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error misses %q:\n%v", want, err)
		}
	}
	if _, err := Define("p", step("ok", StepOptions{RunFlowKey: key, Cost: 3})); err != nil {
		t.Errorf("a RunFlowKey with a Cost: %v", err)
	}
}

// FlowKeyFrom decodes the input as its type: one that does not decode
// has no key.
func TestFlowKeyFrom_DecodesTheInput(t *testing.T) {
	t.Parallel()
	tenant := FlowKeyFrom(func(in struct{ Tenant string }) string { return in.Tenant })
	if got := tenant(json.RawMessage(`{"Tenant":"acme"}`)); got != "acme" {
		t.Errorf("key %q, want acme", got)
	}
	if got := tenant(json.RawMessage(`[1]`)); got != "" {
		t.Errorf("key %q of an input that does not decode, want none", got)
	}
}
