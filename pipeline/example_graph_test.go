package pipeline_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/plenumdb/plenum/pipeline"
)

// A definition's shape, printed as an indented tree: what the dashboard
// draws as a graph.
func ExampleDescribe() {
	inc := func(name string) pipeline.Flow[int, int] {
		return pipeline.Step(name, func(_ context.Context, n int) (int, error) { return n + 1, nil })
	}
	upTo := func(_ context.Context, n int) ([]int, error) { return make([]int, n), nil }
	count := func(_ context.Context, r *pipeline.Results[int]) (int, error) { return r.Len(), nil }
	size := pipeline.Route("size", func(_ context.Context, n int) (string, error) {
		if n > 10 {
			return "big", nil
		}
		return "small", nil
	}, map[string]pipeline.Flow[int, int]{"big": pipeline.Expand("each", upTo, inc("one"), count), "small": inc("small")})
	approve := pipeline.Await("approve", "go", 0, func(_ context.Context, n int, _ struct{}, _ bool) (int, error) { return n, nil })
	p, err := pipeline.Define("sizes", pipeline.Then(inc("start"), pipeline.Then(size, approve)))
	if err != nil {
		fmt.Println(err)
		return
	}
	g, err := pipeline.Describe(p)
	if err != nil {
		fmt.Println(err)
		return
	}
	var show func(n pipeline.GraphNode, depth int)
	show = func(n pipeline.GraphNode, depth int) {
		line := strings.Repeat("  ", depth) + n.Kind
		if n.Label != "" {
			line += " [" + n.Label + "]"
		}
		if n.Name != "" {
			line += " " + n.Name
		}
		if n.Signal != "" {
			line += " (signal " + n.Signal + ")"
		}
		if n.Join != "" {
			line += " then " + n.Join
		}
		fmt.Println(line)
		for _, c := range n.Children {
			show(c, depth+1)
		}
	}
	fmt.Println(g.Pipeline)
	show(g.Root, 0)
	// Output:
	// sizes
	// chain
	//   step start
	//   route size
	//     expand [big] each then collapse
	//       step [each] one
	//     step [small] small
	//   await approve (signal go)
}
