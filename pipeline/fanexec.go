package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
)

// Barrier names: one fan-out per item, so one name each.
const (
	divideBarrier = "pipeline.divide"
	expandBarrier = "pipeline.expand"
)

// resultsPage is how many children a join reads at once; listPage how
// many children of an Expand's list one transaction inserts.
const (
	resultsPage = 500
	listPage    = 500
)

// child is the child that starts flow n with input in, at position idx.
func (j *job) child(ctx context.Context, n *node, in json.RawMessage, idx int) (core.ChildSpec, error) {
	first := entry(n)
	path := strconv.Itoa(idx)
	if j.env.Path != "" {
		path = j.env.Path + "." + path
	}
	spec, err := j.e.spec(j.def, envelope{Node: first.name, In: in, Idx: idx, Path: path}, first, j.runIn(ctx))
	if err != nil {
		return core.ChildSpec{}, err
	}
	return core.ChildSpec{Key: strconv.Itoa(idx), Kind: spec.Kind, Payload: spec.Payload, MaxAttempts: spec.MaxAttempts,
		FlowKey: spec.FlowKey, Cost: spec.Cost, Delay: spec.Delay}, nil
}

// join is the join item of the item's fan-out, in role r.
func (j *job) join(r role) (core.JoinSpec, error) {
	spec, err := j.e.spec(j.def, envelope{Node: j.n.name, Role: r, Idx: j.env.Idx, Path: j.env.Path}, j.n, nil)
	return core.JoinSpec{Queue: spec.Queue, Kind: spec.Kind, Payload: spec.Payload, MaxAttempts: spec.MaxAttempts}, err
}

// divide starts every branch as a child of one barrier, whose join is the
// combine, and hands the item's place over to the join: one fenced
// transaction.
func (j *job) divide(ctx context.Context) error {
	join, err := j.join(roleCombine)
	if err != nil {
		return err
	}
	children := make([]core.ChildSpec, len(j.n.branches))
	for i, b := range j.n.branches {
		if children[i], err = j.child(ctx, b, j.env.In, i); err != nil {
			return err
		}
	}
	return j.w.Fence(ctx, func(ctx context.Context, f *core.Fenced) error {
		b, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: divideBarrier, Join: join, OnChildFailure: core.FailBarrier})
		if err != nil {
			return err
		}
		if _, err := f.AddChildren(ctx, core.AddChildrenParams{Barrier: b.ID, To: "all", Children: children}); err != nil {
			return err
		}
		_, err = f.Seal(ctx, b.ID)
		return err
	})
}

// fanoutError is a source that went over its expand's cap.
type fanoutError struct{ at, max int }

func (e *fanoutError) Error() string {
	return fmt.Sprintf("the source gave %d elements or more, over the cap of %d", e.at, e.max)
}

// expand fans the item out over its source, page by page (core's Expand:
// each page's children and cursor in one fenced transaction), and hands
// its place over to the collapse.
func (j *job) expand(ctx context.Context) error {
	join, err := j.join(roleCollapse)
	if err != nil {
		return err
	}
	res, err := j.e.store.Expand(ctx, j.w.Claim(), core.ExpandParams{
		Barrier:        core.BarrierSpec{Name: expandBarrier, Join: join, OnChildFailure: core.FailBarrier},
		CompleteParent: true,
		Next: func(ctx context.Context, cursor string) (core.ChildPage, error) {
			base, user, err := splitCursor(cursor)
			if err != nil {
				return core.ChildPage{}, Permanent(err)
			}
			p, err := j.page(ctx, base, user)
			if err != nil {
				return core.ChildPage{}, err
			}
			if base+len(p.items) > j.n.maxFanout {
				return core.ChildPage{}, &fanoutError{at: base + len(p.items), max: j.n.maxFanout}
			}
			page := core.ChildPage{Children: make([]core.ChildSpec, len(p.items)), Next: strconv.Itoa(base+len(p.items)) + "|" + p.next, Done: p.done}
			for i, item := range p.items {
				if page.Children[i], err = j.child(ctx, j.n.body, item, base+i); err != nil {
					return core.ChildPage{}, err
				}
			}
			return page, nil
		},
	})
	var over *fanoutError
	if errors.As(err, &over) {
		if err := j.cancelChildren(ctx, res.Barrier.ID); err != nil {
			return err
		}
		return j.halt(ctx, ReasonMaxFanoutExceeded, over.Error())
	}
	return err
}

// page returns the page of the expand's elements that starts at the
// base'th, user being the source's cursor there. A list is read once per
// handler run and served in pages of listPage.
func (j *job) page(ctx context.Context, base int, user string) (rawPage, error) {
	if j.n.list == nil {
		return call(func() (rawPage, error) { return j.n.source(ctx, j.env.In, user) })
	}
	if j.listed == nil {
		items, err := call(func() ([]json.RawMessage, error) { return j.n.list(ctx, j.env.In) })
		if err != nil {
			return rawPage{}, err
		}
		j.listed = append(items, nil)[:len(items)] // not nil once read, even if empty
		if len(items) > j.n.maxFanout {
			return rawPage{}, &fanoutError{at: len(items), max: j.n.maxFanout}
		}
	}
	end := min(base+listPage, len(j.listed))
	if base > end {
		return rawPage{}, Permanent(fmt.Errorf("the list has %d elements, the dispatch is at %d", len(j.listed), base))
	}
	return rawPage{items: j.listed[base:end], done: end == len(j.listed)}, nil
}

// splitCursor reads an expand's dispatch cursor: how many elements came
// before it, and the source's own cursor.
func splitCursor(c string) (int, string, error) {
	if c == "" {
		return 0, "", nil
	}
	n, user, ok := strings.Cut(c, "|")
	base, err := strconv.Atoi(n)
	if !ok || err != nil || base < 0 {
		return 0, "", fmt.Errorf("plenum/pipeline: dispatch cursor %q is not an expand's", c)
	}
	return base, user, nil
}

// cancelChildren cancels the children of barrier that have not finished.
func (j *job) cancelChildren(ctx context.Context, barrier uuid.UUID) error {
	if barrier == uuid.Nil {
		return nil
	}
	after := uuid.Nil
	for {
		kids, err := j.e.store.Children(ctx, core.ChildrenParams{Barrier: barrier, After: after, Limit: resultsPage})
		if err != nil {
			return err
		}
		for _, k := range kids {
			if k.State.Terminal() {
				continue
			}
			if err := j.e.store.Cancel(ctx, k.ID); err != nil && !errors.Is(err, core.ErrFinished) {
				return err
			}
		}
		if len(kids) < resultsPage {
			return nil
		}
		after = kids[len(kids)-1].ID
	}
}

// members reads the children of the join's barrier, page by page; a child
// that did not complete halts the run instead (ReasonBranchFailed).
func (j *job) members(ctx context.Context, fn func(idx int, out json.RawMessage) error) error {
	barrier := j.w.Item().JoinOf
	after := uuid.Nil
	for {
		kids, err := j.e.store.Children(ctx, core.ChildrenParams{Barrier: barrier, After: after, Limit: resultsPage})
		if err != nil {
			return err
		}
		for _, k := range kids {
			var env envelope
			if err := json.Unmarshal(k.Payload, &env); err != nil {
				return Permanent(fmt.Errorf("child %s of barrier %s is not a pipeline item: %w", k.ID, barrier, err))
			}
			if k.State != core.StateCompleted {
				return &branchError{step: env.Node, item: k}
			}
			out, err := j.e.open(sealAAD(j.def.name, sealOut), k.Result)
			if err != nil {
				return fmt.Errorf("the output of step %q (item %s): %w", env.Node, k.ID, err)
			}
			if err := fn(env.Idx, out); err != nil {
				return err
			}
		}
		if len(kids) < resultsPage {
			return nil
		}
		after = kids[len(kids)-1].ID
	}
}

// branchError is a fan-out's child that ended without an output.
type branchError struct {
	step string
	item core.Item
}

func (e *branchError) Error() string {
	return fmt.Sprintf("step %q (item %s) ended %s: %s", e.step, e.item.ID, e.item.State, e.item.LastError)
}

// collapse runs the expand's collapse over its children's outputs, read
// by keyset pages.
func (j *job) collapse(ctx context.Context) error {
	b, err := j.e.store.GetBarrier(ctx, j.w.Item().JoinOf)
	if err != nil {
		return err
	}
	r := &rawResults{count: b.Expected, each: func(ctx context.Context, fn func(int, json.RawMessage) error) error {
		return j.members(ctx, fn)
	}}
	if b.Failed > 0 {
		// Find the child that failed, for the halt's reason.
		if err := j.members(ctx, func(int, json.RawMessage) error { return nil }); err != nil {
			return j.failedBranch(ctx, err)
		}
	}
	out, err := call(func() (json.RawMessage, error) { return j.n.collapse(context.WithValue(ctx, jobKey{}, j), r) })
	if err != nil {
		return j.failedBranch(ctx, err)
	}
	return j.advance(ctx, out, nil)
}

// combine runs the divide's combine over its branches' outputs, in the
// branches' order.
func (j *job) combine(ctx context.Context) error {
	outs := make([]json.RawMessage, len(j.n.branches))
	err := j.members(ctx, func(idx int, out json.RawMessage) error {
		if idx < 0 || idx >= len(outs) {
			return Permanent(fmt.Errorf("branch %d of a divide of %d", idx, len(outs)))
		}
		outs[idx] = out
		return nil
	})
	if err != nil {
		return j.failedBranch(ctx, err)
	}
	out, err := call(func() (json.RawMessage, error) { return j.n.combine(context.WithValue(ctx, jobKey{}, j), outs) })
	if err != nil {
		return err
	}
	return j.advance(ctx, out, nil)
}

// failedBranch halts the run when err is a child that failed; it returns
// any other error as it is.
func (j *job) failedBranch(ctx context.Context, err error) error {
	var be *branchError
	if !errors.As(err, &be) {
		return err
	}
	return j.halt(ctx, ReasonBranchFailed, be.Error())
}
