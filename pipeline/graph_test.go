package pipeline

import (
	"context"
	"reflect"
	"testing"
	"time"
)

// TestDescribe_NamesEveryNodeWithItsLabel checks the shape of a divide's
// branches, a wait's flow on timeout, a sleep and the joins, and that
// Graphs lists an engine's definitions by name, the latest version of a
// pipeline registered in two.
func TestDescribe_NamesEveryNodeWithItsLabel(t *testing.T) {
	t.Parallel()
	never := func(_ context.Context, n int) (int, bool, error) { return n, false, nil }
	wait := WaitUntil("ready", never, inc("fallback"), WaitOptions{Every: Backoff{Initial: time.Second}, Timeout: time.Minute})
	p, err := Define("shape", Then(Then(Divide("split", []Flow[int, int]{inc("left"), Then(inc("r1"), inc("r2"))}, add), wait), Sleep[int]("nap", time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	g, err := Describe(p)
	if err != nil {
		t.Fatal(err)
	}
	want := Graph{Pipeline: "shape", Version: 1, Root: GraphNode{Kind: "chain", Children: []GraphNode{
		{Kind: "divide", Name: "split", Join: "combine", Children: []GraphNode{
			{Kind: "step", Name: "left", Label: "0"},
			{Kind: "chain", Label: "1", Children: []GraphNode{{Kind: "step", Name: "r1"}, {Kind: "step", Name: "r2"}}},
		}},
		{Kind: "wait", Name: "ready", Children: []GraphNode{{Kind: "step", Name: "fallback", Label: "timeout"}}},
		{Kind: "sleep", Name: "nap"},
	}}}
	if !reflect.DeepEqual(g, want) {
		t.Errorf("Describe:\n got %+v\nwant %+v", g, want)
	}
	other, err := Define("other", inc("one"))
	if err != nil {
		t.Fatal(err)
	}
	other3, err := Define("other", inc("three"), Options{Version: 3})
	if err != nil {
		t.Fatal(err)
	}
	e := &Engine{defs: map[string]map[int]*definition{"shape": {1: p.def}, "other": {1: other.def, 3: other3.def}}}
	if gs := e.Graphs(); len(gs) != 2 || gs[0].Pipeline != "other" || gs[0].Version != 3 || gs[0].Root.Name != "three" || !reflect.DeepEqual(gs[1], want) {
		t.Errorf("Graphs: %+v", gs)
	}
	if _, err := Describe((*Pipeline[int, int])(nil)); err == nil {
		t.Error("Describe of a nil pipeline succeeded")
	}
	if _, err := Describe(nil); err == nil {
		t.Error("Describe(nil) succeeded")
	}
}
