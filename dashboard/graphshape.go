package dashboard

// shape is how the graph draws a kind of node (pipeline.GraphNode.Kind).
type shape struct {
	// outline is the box's outline: "rect", "round" or "hex".
	outline string
	// pass, when set, labels one more way out of the node beside its
	// flows, one that runs none of them (a wait whose condition held).
	pass string
}

// shapes maps each node kind to its drawing: a kind added to package
// pipeline is one line here. A kind missing from it is drawn as a plain
// labelled box, its flows (if any) side by side below it. A chain is no
// box: its nodes are drawn one below the other.
var shapes = map[string]shape{
	"step":   {outline: "rect"},
	"await":  {outline: "round"},
	"wait":   {outline: "round", pass: "holds"},
	"repeat": {outline: "round"},
	"sleep":  {outline: "round"},
	"route":  {outline: "hex"},
	"divide": {outline: "hex"},
	"expand": {outline: "hex"},
}

// shapeOf returns the drawing of kind, and the CSS class of its boxes.
func shapeOf(kind string) (shape, string) {
	if s, ok := shapes[kind]; ok {
		return s, "kind-" + kind
	}
	return shape{outline: "rect"}, "kind-other"
}
