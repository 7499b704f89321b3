package dashboard

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/plenumdb/plenum/pipeline"
)

// The graph's geometry, in SVG user units (pixels at 100%).
const (
	graphMargin = 16 // around the drawing
	graphVGap   = 34 // between a box and what follows it
	graphHGap   = 22 // between flows side by side
	graphPassW  = 56 // the width of a way out that runs no flow
	boxMinW     = 112
	boxPadX     = 10
	boxLineH    = 16
	boxPadY     = 8
	charW       = 7 // a character's width, generous for the box's font
)

// graphView is a pipeline's graph laid out: what the template draws.
type graphView struct {
	Pipeline string
	W, H     int
	Boxes    []graphBox
	Edges    []graphEdge
	// Overlay says the boxes carry a run's states.
	Overlay bool
}

// graphBox is one box: a node, or the join of an expand or a divide.
type graphBox struct {
	X, Y, W, H int
	// Node and Role name what the box stands for (stepKey).
	Node, Role string
	// Kind is the node's kind; Tag the box's first line (the kind, or
	// the join's role, and an await's signal).
	Kind, Tag string
	// Class is the kind's CSS class (shapeOf); Outline its outline.
	Class, Outline string
	// Lines are the overlay's lines under the name.
	Lines []string
	// Texts are the box's lines placed: the tag, the name, the lines.
	Texts []boxText
	// State is the overlay, nil on a definition's page or for a box no
	// item read has reached.
	State *stepState
}

// Points is the outline of a "hex" box, as a polygon's points.
func (b graphBox) Points() string {
	const in = 10
	return fmt.Sprintf("%d,%d %d,%d %d,%d %d,%d %d,%d %d,%d",
		b.X+in, b.Y, b.X+b.W-in, b.Y, b.X+b.W, b.Y+b.H/2, b.X+b.W-in, b.Y+b.H, b.X+in, b.Y+b.H, b.X, b.Y+b.H/2)
}

// boxText is one line of a box, centred at X.
type boxText struct {
	Class string // head, name or line
	X, Y  int
	Text  string
}

// texts places the box's lines, once it is placed.
func (b graphBox) texts() []boxText {
	lines := append([]string{b.Tag, b.Node}, b.Lines...)
	out := make([]boxText, len(lines))
	for i, l := range lines {
		class := "line"
		switch i {
		case 0:
			class = "head"
		case 1:
			class = "name"
		}
		out[i] = boxText{Class: class, X: b.X + b.W/2, Y: b.Y + boxPadY + boxLineH*(i+1) - 4, Text: l}
	}
	return out
}

// graphEdge is an arrow between boxes along its points, with an
// optional label near its head.
type graphEdge struct {
	Pts    []point
	Label  string
	LX, LY int
	// Arrow says the edge ends at a box, with an arrowhead.
	Arrow bool
}

// point is a point of an edge.
type point struct{ X, Y int }

// Points is the edge as a polyline's points.
func (e graphEdge) Points() string {
	var s strings.Builder
	for i, p := range e.Pts {
		if i > 0 {
			s.WriteByte(' ')
		}
		fmt.Fprintf(&s, "%d,%d", p.X, p.Y)
	}
	return s.String()
}

// elbow is the edge from (x1, y1) down to (x2, y2), turning at mid y.
func elbow(x1, y1, x2, y2, mid int) []point {
	if x1 == x2 {
		return []point{{x1, y1}, {x2, y2}}
	}
	return []point{{x1, y1}, {x1, mid}, {x2, mid}, {x2, y2}}
}

// block is a laid-out part of the graph, in its own coordinates: entered
// at the middle of its top, left at the middle of its bottom.
type block struct {
	w, h  int
	boxes []graphBox
	edges []graphEdge
}

// place adds b to p at (x, y).
func (p *block) place(b block, x, y int) {
	for _, bx := range b.boxes {
		bx.X += x
		bx.Y += y
		p.boxes = append(p.boxes, bx)
	}
	for _, e := range b.edges {
		e.Pts = append([]point(nil), e.Pts...)
		for i := range e.Pts {
			e.Pts[i].X += x
			e.Pts[i].Y += y
		}
		e.LX += x
		e.LY += y
		p.edges = append(p.edges, e)
	}
}

// layoutGraph lays g out top to bottom, each box carrying its state
// from states (nil: the definition alone).
func layoutGraph(g pipeline.Graph, states map[stepKey]*stepState) *graphView {
	b := layoutNode(g.Root, states)
	v := &graphView{Pipeline: g.Pipeline, W: b.w + 2*graphMargin, H: b.h + 2*graphMargin, Overlay: states != nil}
	var root block
	root.place(b, graphMargin, graphMargin)
	v.Boxes, v.Edges = root.boxes, root.edges
	for i := range v.Boxes {
		v.Boxes[i].Texts = v.Boxes[i].texts()
	}
	return v
}

// layoutNode lays out n: a chain one below the other, a node with flows
// as its box, its flows side by side, and its join box or the point
// where they meet; any other node as its box.
func layoutNode(n pipeline.GraphNode, states map[stepKey]*stepState) block {
	if n.Kind == "chain" {
		return layoutChain(n.Children, states)
	}
	sh, class := shapeOf(n.Kind)
	head := nodeBox(n, n.Kind, n.Name, "", class, sh.outline, states)
	if len(n.Children) == 0 && n.Join == "" {
		return block{w: head.W, h: head.H, boxes: []graphBox{head}}
	}
	// The columns under the head: its flows, then a way out running none.
	type column struct {
		b     block
		label string
		pass  bool
	}
	var cols []column
	for _, c := range n.Children {
		cols = append(cols, column{layoutNode(c, states), c.Label, false})
	}
	if sh.pass != "" {
		cols = append(cols, column{block{w: graphPassW}, sh.pass, true})
	}
	rowW, rowH := 0, 0
	for i, c := range cols {
		if i > 0 {
			rowW += graphHGap
		}
		rowW += c.b.w
		rowH = max(rowH, c.b.h)
	}
	var join *graphBox
	if n.Join != "" {
		j := nodeBox(n, n.Join, n.Name, n.Join, class, sh.outline, states)
		join = &j
	}
	w := max(head.W, rowW)
	if join != nil {
		w = max(w, join.W)
	}
	var out block
	out.w = w
	head.X = (w - head.W) / 2
	out.boxes = append(out.boxes, head)
	rowY := head.H + graphVGap
	meetY := rowY + rowH + graphVGap
	x := (w - rowW) / 2
	for _, c := range cols {
		cx := x + c.b.w/2
		out.place(c.b, x, rowY)
		out.edges = append(out.edges, graphEdge{
			Pts:   elbow(w/2, head.H, cx, rowY, head.H+graphVGap/2),
			Label: c.label, LX: cx + 6, LY: rowY - 6, Arrow: !c.pass,
		})
		// From the column's bottom down to where the flows meet.
		out.edges = append(out.edges, graphEdge{Pts: elbow(cx, rowY+c.b.h, w/2, meetY, meetY-graphVGap/2), Arrow: join != nil})
		x += c.b.w + graphHGap
	}
	if join != nil {
		join.X, join.Y = (w-join.W)/2, meetY
		out.boxes = append(out.boxes, *join)
		out.h = meetY + join.H
	} else {
		out.h = meetY
	}
	return out
}

// layoutChain lays the nodes of a chain one below the other, centred,
// with an arrow from each to the next.
func layoutChain(seq []pipeline.GraphNode, states map[stepKey]*stepState) block {
	parts := make([]block, len(seq))
	w := 0
	for i, n := range seq {
		parts[i] = layoutNode(n, states)
		w = max(w, parts[i].w)
	}
	out := block{w: w}
	y := 0
	for i, p := range parts {
		if i > 0 {
			out.edges = append(out.edges, graphEdge{Pts: []point{{w / 2, y}, {w / 2, y + graphVGap}}, Arrow: true})
			y += graphVGap
		}
		out.place(p, (w-p.w)/2, y)
		y += p.h
	}
	out.h = y
	return out
}

// nodeBox makes the box of node n in role (its tag tag), sized for its
// text and its state's lines. The flow's label is on the edge into it.
func nodeBox(n pipeline.GraphNode, tag, name, role, class, outline string, states map[stepKey]*stepState) graphBox {
	if n.Signal != "" {
		tag += " · signal " + n.Signal
	}
	b := graphBox{Node: name, Role: role, Kind: n.Kind, Tag: tag, Class: class, Outline: outline}
	if states != nil {
		b.State = states[stepKey{name, role}]
		b.Lines = overlayLines(b.State)
	}
	longest := max(utf8.RuneCountInString(tag), utf8.RuneCountInString(name))
	for _, l := range b.Lines {
		longest = max(longest, utf8.RuneCountInString(l))
	}
	b.W = max(boxMinW, longest*charW+2*boxPadX)
	if outline == "hex" {
		b.W += 16
	}
	b.H = 2*boxPadY + boxLineH*(2+len(b.Lines))
	return b
}

// overlayLines are the lines a box shows of its items: their states,
// then attempts and time, then a fan-out's arrivals.
func overlayLines(s *stepState) []string {
	if s == nil {
		return []string{"not reached"}
	}
	var states []string
	for _, c := range s.States {
		if s.Items == 1 {
			states = append(states, c.State)
		} else {
			states = append(states, fmt.Sprintf("%d %s", c.N, c.State))
		}
	}
	lines := []string{strings.Join(states, ", ")}
	att := fmt.Sprintf("%d attempt", s.Attempts)
	if s.Attempts != 1 {
		att += "s"
	}
	if d := s.Took(); d > 0 {
		att += " · " + duration(d)
	}
	lines = append(lines, att)
	if s.Fanouts > 0 {
		fan := fmt.Sprintf("%d/%d arrived", s.Arrived, s.Expected)
		if s.Failed > 0 {
			fan += fmt.Sprintf(", %d failed", s.Failed)
		}
		lines = append(lines, fan)
	}
	return lines
}
