package pipeline

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
)

// Graph is a definition's shape without its functions: its nodes and how
// they nest, for a reader that draws or lists it (the dashboard draws it,
// dashboard.Options.Pipelines). It is plain data, safe to keep and share.
type Graph struct {
	// Pipeline is the definition's name, which its runs carry
	// (core.Run.Name).
	Pipeline string
	// Version is the definition's version (Options.Version).
	Version int
	// Root is the definition's flow.
	Root GraphNode
}

// GraphNode is one node of a Graph.
type GraphNode struct {
	// Kind is what the node is: "step", "chain", "expand", "divide",
	// "route", "await", "wait" (a WaitUntil), "repeat" (a RepeatUntil)
	// or "sleep" (a Sleep or SleepUntil). A reader should show a
	// kind it does not know (one a later version adds) as a plain node.
	Kind string
	// Name is the node's name, unique in its pipeline: the node every
	// item that runs it names (as the run's steps do, Step.Step). Empty
	// for a chain, which has no item of its own.
	Name string
	// Label says which of its parent's flows the node starts: a route's
	// name for the flow ("even"), a divide's branch by position ("0",
	// "1", ...), "each" for an expand's body, "timeout" for a WaitUntil's
	// flow on timeout. Empty in a chain and at the root.
	Label string
	// Signal is the signal an await waits for; empty for other kinds.
	Signal string
	// Join is the role of the item that fans the node's flows back in:
	// "collapse" for an expand, "combine" for a divide (Step.Role of
	// that item); empty for other kinds.
	Join string
	// Children are the node's flows, in order: a chain's nodes, a
	// divide's branches, a route's flows by name, an expand's body, a
	// WaitUntil's flow on timeout (none when it halts the run instead).
	Children []GraphNode
}

// Describe returns the shape of d, a definition made by Define.
func Describe(d Definition) (Graph, error) {
	if d == nil || d.definition() == nil {
		return Graph{}, errors.New("plenum/pipeline: Describe: nil definition")
	}
	def := d.definition()
	return Graph{Pipeline: def.name, Version: def.version, Root: describe(def.root, "")}, nil
}

// Graphs returns the shapes of the definitions registered with the
// engine, sorted by name, the latest version of each pipeline that has
// several: what dashboard.Options.Pipelines takes.
func (e *Engine) Graphs() []Graph {
	e.mu.Lock()
	defer e.mu.Unlock()
	gs := make([]Graph, 0, len(e.defs))
	for _, versions := range e.defs {
		var def *definition
		for _, d := range versions {
			if def == nil || d.version > def.version {
				def = d
			}
		}
		gs = append(gs, Graph{Pipeline: def.name, Version: def.version, Root: describe(def.root, "")})
	}
	slices.SortFunc(gs, func(a, b Graph) int { return cmp.Compare(a.Pipeline, b.Pipeline) })
	return gs
}

// describe copies n, which starts its parent's flow named label.
func describe(n *node, label string) GraphNode {
	g := GraphNode{Kind: n.kind.String(), Name: n.name, Label: label, Signal: n.signal}
	if n.kind == kindChain {
		g.Name = ""
	}
	for _, c := range flows(n) {
		g.Children = append(g.Children, describe(c.n, c.label))
	}
	switch n.kind {
	case kindExpand:
		g.Join = string(roleCollapse)
	case kindDivide:
		g.Join = string(roleCombine)
	}
	return g
}

// labelled is a node's flow and its label.
type labelled struct {
	label string
	n     *node
}

// flows lists the flows nested in n, each with the label Describe gives
// it: a node kind that has flows names them here.
func flows(n *node) []labelled {
	var out []labelled
	switch n.kind {
	case kindChain:
		for _, s := range n.seq {
			out = append(out, labelled{"", s})
		}
	case kindDivide:
		for i, b := range n.branches {
			out = append(out, labelled{strconv.Itoa(i), b})
		}
	case kindRoute:
		keys := make([]string, 0, len(n.routes))
		for k := range n.routes {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = append(out, labelled{k, n.routes[k]})
		}
	case kindExpand:
		out = append(out, labelled{"each", n.body})
	case kindWaitUntil:
		if n.onTimeout != nil {
			out = append(out, labelled{"timeout", n.onTimeout})
		}
	}
	return out
}
