package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
)

// Page is one page of a streaming source (ExpandStream).
type Page[E any] struct {
	// Items are the page's elements, each the input of one child.
	Items []E
	// Next is the cursor of the page after this one: text of at most a
	// few kilobytes (see core.MaxCursorBytes), saved with the page's
	// children, so that a source read again after a crash resumes there.
	Next string
	// Done marks the last page.
	Done bool
}

// rawPage is a Page of JSON elements.
type rawPage struct {
	items []json.RawMessage
	next  string
	done  bool
}

// Expand runs each on every element of the list that list returns for the
// input, as children that run in parallel, then collapse on their outputs:
// the fan-out and its fan-in, paired by construction, so that however
// deep each nests (an expand inside a divided branch inside an expand),
// the collapse is always the one its expand names. The list is held in
// memory once, by the step that expands it, and its children inserted in
// pages of a few hundred, each page in its own transaction: for lists
// larger than memory, use ExpandStream. Options.MaxFanout (or opts' MaxFanout) caps how many
// children one expand makes.
func Expand[I, E, R, O any](name string, list func(ctx context.Context, in I) ([]E, error), each Flow[E, R], collapse func(ctx context.Context, results *Results[R]) (O, error), opts ...ExpandOptions) Flow[I, O] {
	f := ExpandStream[I, E, R, O](name, nil, each, collapse, opts...)
	if list != nil {
		f.n.list = func(ctx context.Context, raw json.RawMessage) ([]json.RawMessage, error) {
			in, err := decode[I](raw)
			if err != nil {
				return nil, Permanent(fmt.Errorf("expand %q: decode its input as %T: %w", name, in, err))
			}
			items, err := list(ctx, in)
			if err != nil {
				return nil, err
			}
			out := make([]json.RawMessage, len(items))
			for i, e := range items {
				if out[i], err = encode(name, e); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
	}
	return f
}

// ExpandOptions tune an expand.
type ExpandOptions struct {
	StepOptions
	// MaxFanout caps the children of this expand; above it the run halts
	// with ReasonMaxFanoutExceeded and the children already made are
	// cancelled. Default: Options.MaxFanout.
	MaxFanout int
}

// ExpandStream is Expand over a streaming source: source returns the page
// of elements that starts at cursor ("" for the first), and must return
// the same page for the same cursor. Each page's children are inserted in
// one transaction that saves the page's Next cursor, so a crash resumes
// at the last saved page and creates no child twice. The fan-out cap is
// checked on every page, before its children are inserted.
func ExpandStream[I, E, R, O any](name string, source func(ctx context.Context, in I, cursor string) (Page[E], error), each Flow[E, R], collapse func(ctx context.Context, results *Results[R]) (O, error), opts ...ExpandOptions) Flow[I, O] {
	var o ExpandOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	n := &node{kind: kindExpand, name: name, opts: o.StepOptions, body: each.n, maxFanout: o.MaxFanout}
	if source != nil {
		n.source = func(ctx context.Context, raw json.RawMessage, cursor string) (rawPage, error) {
			in, err := decode[I](raw)
			if err != nil {
				return rawPage{}, Permanent(fmt.Errorf("expand %q: decode its input as %T: %w", name, in, err))
			}
			p, err := source(ctx, in, cursor)
			if err != nil {
				return rawPage{}, err
			}
			out := rawPage{items: make([]json.RawMessage, len(p.Items)), next: p.Next, done: p.Done}
			for i, e := range p.Items {
				if out.items[i], err = encode(name, e); err != nil {
					return rawPage{}, err
				}
			}
			return out, nil
		}
	}
	if collapse != nil {
		n.collapse = func(ctx context.Context, r *rawResults) (json.RawMessage, error) {
			out, err := collapse(ctx, &Results[R]{raw: r})
			if err != nil {
				return nil, err
			}
			return encode(name, out)
		}
	}
	return Flow[I, O]{n}
}

// Divide runs every branch on the input, in parallel, then combine on
// their outputs, in the order of branches.
func Divide[I, B, O any](name string, branches []Flow[I, B], combine func(ctx context.Context, outs []B) (O, error), opts ...StepOptions) Flow[I, O] {
	n := &node{kind: kindDivide, name: name, opts: first(opts)}
	for _, b := range branches {
		n.branches = append(n.branches, b.n)
	}
	if combine != nil {
		n.combine = func(ctx context.Context, raws []json.RawMessage) (json.RawMessage, error) {
			outs := make([]B, len(raws))
			for i, raw := range raws {
				var err error
				if outs[i], err = decode[B](raw); err != nil {
					return nil, Permanent(fmt.Errorf("divide %q: decode branch %d's output as %T: %w", name, i, outs[i], err))
				}
			}
			out, err := combine(ctx, outs)
			if err != nil {
				return nil, err
			}
			return encode(name, out)
		}
	}
	return Flow[I, O]{n}
}

// Result is one child's output, as a collapse reads it.
type Result[R any] struct {
	// Index is the child's element's position in its expand's list (or
	// stream), from 0.
	Index int
	// Value is the output of the child's flow.
	Value R
}

// Results are an expand's children's outputs, read by keyset pages from
// the database as a collapse asks for them, never all at once: a
// collapse over a million children holds one page. They come in the
// order of the children's final items (not of Index): a collapse that
// needs the list's order sorts by Index, or folds with an order-free
// operation.
type Results[R any] struct{ raw *rawResults }

// Len is the number of children.
func (r *Results[R]) Len() int { return int(r.raw.count) }

// Each calls fn on every result, page by page, and stops at fn's first
// error, which it returns.
func (r *Results[R]) Each(ctx context.Context, fn func(Result[R]) error) error {
	return r.raw.each(ctx, func(idx int, raw json.RawMessage) error {
		v, err := decode[R](raw)
		if err != nil {
			return Permanent(fmt.Errorf("collapse: decode child %d's output as %T: %w", idx, v, err))
		}
		return fn(Result[R]{Index: idx, Value: v})
	})
}

// rawResults pages through a fired barrier's children.
type rawResults struct {
	count int64
	each  func(ctx context.Context, fn func(idx int, out json.RawMessage) error) error
}
