package pipelinesuite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/plenumdb/plenum/pipeline"
)

// order is the input of the run-input subtest's runs.
type order struct {
	Customer string `json:"customer"`
	Lines    []int  `json:"lines"`
}

// stepsReadRunInput: every kind of function of a run reads the run's
// input (RunInput) however far it is from the first step, inside a
// fan-out's children and join, after a route, typed or raw; an input
// read as a type it is not is an error; two runs of one pipeline each
// read their own.
func stepsReadRunInput(e *env) {
	customer := func(ctx context.Context) (string, error) {
		o, err := pipeline.RunInput[order](ctx)
		return o.Customer, err
	}
	lines := pipeline.Step("lines", func(_ context.Context, o order) ([]int, error) { return o.Lines, nil })
	each := pipeline.Step("line", func(ctx context.Context, n int) (string, error) {
		c, err := customer(ctx)
		return fmt.Sprintf("%s:%d", c, n), err
	})
	joined := func(ctx context.Context, r *pipeline.Results[string]) (string, error) {
		out := make([]string, r.Len())
		if err := r.Each(ctx, func(x pipeline.Result[string]) error { out[x.Index] = x.Value; return nil }); err != nil {
			return "", err
		}
		c, err := customer(ctx)
		return c + "[" + strings.Join(out, ",") + "]", err
	}
	fan := pipeline.Expand("price", func(_ context.Context, xs []int) ([]int, error) { return xs, nil }, each, joined)
	which := pipeline.Route("which", func(ctx context.Context, _ string) (string, error) { return customer(ctx) },
		map[string]pipeline.Flow[string, string]{
			"ada": label("label-ada"),
			"bob": label("label-bob"),
		})
	p := define(e, "runinput", pipeline.Then(lines, pipeline.Then(fan, which)))
	eng := e.engine(pipeline.EngineOptions{}, p)
	runs := map[string]order{"ada": {Customer: "ada", Lines: []int{1, 2, 3}}, "bob": {Customer: "bob", Lines: []int{4}}}
	want := map[string]string{
		"ada": "label-ada ada[ada:1,ada:2,ada:3] raw:ada[1 2 3]",
		"bob": "label-bob bob[bob:4] raw:bob[4]",
	}
	for name, in := range runs {
		run, err := p.Trigger(e.ctx, eng, in)
		if err != nil {
			e.t.Fatal(err)
		}
		if got := output[string](e, e.waitRun(eng, run, pipeline.StateCompleted)); got != want[name] {
			e.t.Errorf("run of %s: output %q, want %q", name, got, want[name])
		}
	}
}

// label is a step that prefixes its input with its name and suffixes the
// run's input read as JSON, and fails unless reading that input as a type it
// is not is an error.
func label(name string) pipeline.Flow[string, string] {
	return pipeline.Step(name, func(ctx context.Context, s string) (string, error) {
		if _, err := pipeline.RunInput[int](ctx); err == nil {
			return "", pipeline.Permanent(errors.New("the run's input read as an int"))
		}
		raw, err := pipeline.RunInput[json.RawMessage](ctx)
		if err != nil {
			return "", err
		}
		var o order // the database may have reordered the JSON's keys
		if err := json.Unmarshal(raw, &o); err != nil {
			return "", fmt.Errorf("the run's input as JSON %s: %w", raw, err)
		}
		return fmt.Sprintf("%s %s raw:%s%v", name, s, o.Customer, o.Lines), nil
	})
}
