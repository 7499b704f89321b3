package conformance

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/fault"
)

// faultActions are the in-process faults each point is checked with: an
// error returned there, and a panic raised there (recovered by the test,
// as a handler's panic is by the runtime). Killing the process at each
// point is the runtime suite's (workersuite.RunFaultKills).
var faultActions = []fault.Action{fault.Error, fault.Panic}

// injected runs fn under a context that makes point fail with action
// once, and returns fn's error, or what it panicked with.
func (e *env) injected(point fault.Point, action fault.Action, fn func(ctx context.Context) error) error {
	return recovered(func() error {
		return fn(fault.With(e.ctx, point, fault.Rule{Action: action, Times: 1}))
	})
}

// recovered runs fn and returns its error, or the error it panicked with
// (a fault's panic value is one).
func recovered(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			if perr, ok := p.(error); ok {
				err = perr
			} else {
				err = fmt.Errorf("panic: %v", p)
			}
		}
	}()
	return fn()
}

// wantInjected fails unless err is the fault injected at point.
func (e *env) wantInjected(what string, point fault.Point, err error) {
	e.t.Helper()
	var inj *fault.Injected
	if !errors.As(err, &inj) || inj.Point != point {
		e.t.Errorf("%s: %v, want the fault injected at %s", what, err, point)
	}
}

// Injection points inside a transaction: an error or a panic there rolls
// back both halves of what the point separates, and the operation run
// again afterwards does its work exactly once.
func testFaultsRollBackBothHalves(e *env) {
	for _, action := range faultActions {
		e.run("FenceBeforeCommit_"+action.String(), func(e *env) { faultFence(e, action) })
		e.run("CompleteBeforeArrival_"+action.String(), func(e *env) { faultCompleteArrival(e, action) })
		e.run("FireBeforeJoin_"+action.String(), func(e *env) { faultFireJoin(e, action) })
		e.run("DispatchBetweenPages_"+action.String(), func(e *env) { faultDispatch(e, action) })
		e.run("ReapBeforeCrashCount_"+action.String(), func(e *env) { faultReap(e, action) })
		e.run("RetainBetweenBatches_"+action.String(), func(e *env) { faultRetain(e, action) })
	}
}

// A fault after the fenced function returned and before the commit: no
// effect, no enqueued item, no completion; the fence run again commits
// them once.
func faultFence(e *env, action fault.Action) {
	const queue, out = "ff", "ff-out"
	side := e.sideTable()
	id := e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	c := e.claimOne(e.s, e.owner(e.s), queue)
	before := e.get(id)
	fn := func(ctx context.Context, f *core.Fenced) error {
		if _, err := f.ExecContext(ctx, e.sideInsert(side), c.ID.String()); err != nil {
			return err
		}
		if _, err := f.Enqueue(ctx, core.ItemSpec{Queue: out}); err != nil {
			return err
		}
		return f.Complete(ctx, []byte(`{"fenced":true}`))
	}
	err := e.injected(fault.FenceBeforeCommit, action, func(ctx context.Context) error {
		held, err := e.s.Fence(ctx, c, fn)
		if !held && err == nil {
			return errors.New("fence not held")
		}
		return err
	})
	e.wantInjected("Fence", fault.FenceBeforeCommit, err)
	if n := e.sideCount(side); n != 0 {
		e.t.Errorf("after the fault: %d effects, want 0", n)
	}
	if n := e.total(out); n != 0 {
		e.t.Errorf("after the fault: %d enqueued items, want 0", n)
	}
	if d := itemDiff(before, e.get(id)); d != "" {
		e.t.Errorf("after the fault the item changed: %s", d)
	}
	if held, err := e.s.Fence(e.ctx, c, fn); !held || err != nil {
		e.t.Fatalf("Fence again = held %v, %v; want it to commit", held, err)
	}
	if e.sideCount(side) != 1 || e.total(out) != 1 || e.get(id).State != core.StateCompleted {
		e.t.Errorf("after the fence ran again: %d effects, %d enqueued, item %s; want 1, 1, completed", e.sideCount(side), e.total(out), e.get(id).State)
	}
}

// A fault between the children's update and their arrivals: the children
// stay claimed and the barrier's count stays; completed again, each
// arrives once, and the barrier fires once.
func faultCompleteArrival(e *env, action fault.Action) {
	const queue, kidsQ = "fc", "fc-kids"
	e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	o := e.owner(e.s)
	bar := e.fanOut(e.s, e.claimOne(e.s, o, queue), core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "fc-join"}}, kids(kidsQ, "k", 3))
	cs := e.claimAll(e.s, o, kidsQ, 3)
	before := map[uuid.UUID]core.Item{}
	for _, c := range cs {
		before[c.ID] = e.get(c.ID)
	}
	two := []core.Completion{{Claim: cs[0]}, {Claim: cs[1]}}
	err := e.injected(fault.CompleteBeforeArrival, action, func(ctx context.Context) error {
		_, err := e.s.CompleteMany(ctx, two)
		return err
	})
	e.wantInjected("CompleteMany", fault.CompleteBeforeArrival, err)
	for id, it := range before {
		if d := itemDiff(it, e.get(id)); d != "" {
			e.t.Errorf("after the fault child %s changed: %s", id, d)
		}
	}
	if b := e.barrier(bar.ID); b.Arrived != 0 || b.Failed != 0 || b.Fired() {
		e.t.Fatalf("after the fault: barrier arrived %d, failed %d, fired %v; want nothing counted", b.Arrived, b.Failed, b.Fired())
	}
	if lost, err := e.s.CompleteMany(e.ctx, two); err != nil || len(lost) != 0 {
		e.t.Fatalf("CompleteMany again = lost %v, %v", lost, err)
	}
	if b := e.barrier(bar.ID); b.Arrived != 2 || b.Fired() {
		e.t.Fatalf("after completing two again: arrived %d, fired %v; want 2, not fired", b.Arrived, b.Fired())
	}
	e.complete(e.s, cs[2], "")
	if b := e.barrier(bar.ID); b.Arrived != 3 || !b.Fired() || e.joinsOf(bar.ID) != 1 {
		e.t.Errorf("after the last child: arrived %d, fired %v, %d joins; want 3, fired, one join", b.Arrived, b.Fired(), e.joinsOf(bar.ID))
	}
}

// A fault between the barrier's firing update and its join's insert: the
// barrier stays unfired, without a join, and the arrival that fired it is
// undone with it; completed again, the child fires it once.
func faultFireJoin(e *env, action fault.Action) {
	const queue, kidsQ = "fj", "fj-kids"
	e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	o := e.owner(e.s)
	bar := e.fanOut(e.s, e.claimOne(e.s, o, queue), core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "fj-join"}}, kids(kidsQ, "k", 1))
	c := e.claimOne(e.s, o, kidsQ)
	before := e.get(c.ID)
	err := e.injected(fault.FireBeforeJoin, action, func(ctx context.Context) error { return e.s.Complete(ctx, c, nil) })
	e.wantInjected("Complete", fault.FireBeforeJoin, err)
	if d := itemDiff(before, e.get(c.ID)); d != "" {
		e.t.Errorf("after the fault the child changed: %s", d)
	}
	if b := e.barrier(bar.ID); b.Arrived != 0 || b.Fired() || b.JoinItemID != uuid.Nil || e.joinsOf(bar.ID) != 0 {
		e.t.Fatalf("after the fault: arrived %d, fired %v, join %s, %d joins; want nothing", b.Arrived, b.Fired(), b.JoinItemID, e.joinsOf(bar.ID))
	}
	e.complete(e.s, c, "")
	if b := e.barrier(bar.ID); b.Arrived != 1 || !b.Fired() || e.joinsOf(bar.ID) != 1 {
		e.t.Errorf("after completing again: arrived %d, fired %v, %d joins; want 1, fired, one join", b.Arrived, b.Fired(), e.joinsOf(bar.ID))
	}
}

// A fault between two pages of a dispatch: the pages before it stay, with
// their cursor; the dispatch run again resumes there and creates no
// duplicates.
func faultDispatch(e *env, action fault.Action) {
	const queue, kidsQ, pages, perPage = "fd", "fd-kids", 4, 3
	next := func(_ context.Context, cursor string) (core.ChildPage, error) {
		i := 0
		if cursor != "" {
			i, _ = strconv.Atoi(cursor)
		}
		return core.ChildPage{Children: kids(kidsQ, fmt.Sprintf("p%d-", i), perPage), Next: strconv.Itoa(i + 1), Done: i == pages-1}, nil
	}
	params := core.ExpandParams{Barrier: core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "fd-join"}}, Next: next, CompleteParent: true}
	parent := e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	c := e.claimOne(e.s, e.owner(e.s), queue)
	// The fault comes after the second page.
	ctx := fault.With(e.ctx, fault.DispatchBetweenPages, fault.Rule{Action: action, Skip: 1, Times: 1})
	var r core.ExpandResult
	err := recovered(func() error {
		var err error
		r, err = e.s.Expand(ctx, c, params)
		return err
	})
	e.wantInjected("Expand", fault.DispatchBetweenPages, err)
	var bid uuid.UUID
	if err := e.db.QueryRowContext(e.ctx, "SELECT id FROM "+e.names.Barriers).Scan(&bid); err != nil {
		e.t.Fatalf("the barrier after the fault: %v", err)
	}
	b := e.barrier(bid)
	if b.Expected != 2*perPage || b.Cursor != "2" || b.Sealed || e.total(kidsQ) != 2*perPage {
		e.t.Fatalf("after the fault: expected %d, cursor %q, sealed %v, %d children; want %d, \"2\", not sealed, %d", b.Expected, b.Cursor, b.Sealed, e.total(kidsQ), 2*perPage, 2*perPage)
	}
	if action == fault.Error && (r.Batches != 2 || r.Inserted != 2*perPage) {
		e.t.Errorf("the interrupted Expand reported %d batches, %d inserted; want 2, %d", r.Batches, r.Inserted, 2*perPage)
	}
	r, err = e.s.Expand(e.ctx, c, params)
	if err != nil {
		e.t.Fatalf("Expand again: %v", err)
	}
	if r.Inserted != (pages-2)*perPage || r.Batches != pages-2 || !r.Barrier.Sealed || r.Barrier.Expected != pages*perPage {
		e.t.Errorf("Expand again: inserted %d in %d batches, sealed %v, expected %d; want %d in %d, sealed, %d", r.Inserted, r.Batches, r.Barrier.Sealed, r.Barrier.Expected, (pages-2)*perPage, pages-2, pages*perPage)
	}
	keys := map[string]bool{}
	for _, k := range e.children(b.ID) {
		keys[k.Key] = true
	}
	if len(keys) != pages*perPage || e.total(kidsQ) != pages*perPage {
		e.t.Errorf("%d children with %d distinct keys, want %d", e.total(kidsQ), len(keys), pages*perPage)
	}
	if it := e.get(parent); it.State != core.StateCompleted {
		e.t.Errorf("parent is %s, want completed", it.State)
	}
}

// A fault in a reaper batch between the release and the crash's record:
// the claims stay held, no crash is counted or recorded; the next pass
// counts each crash once.
func faultReap(e *env, action fault.Action) {
	const queue, n = "fr", 3
	for range n {
		e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	}
	cs := e.claimAll(e.s, e.owner(e.s), queue, n)
	before := map[uuid.UUID]core.Item{}
	for _, c := range cs {
		before[c.ID] = e.get(c.ID)
	}
	later := e.at(10 * time.Minute)
	p := core.ReapParams{StaleAfter: 5 * time.Minute}
	err := e.injected(fault.ReapBeforeCrashCount, action, func(ctx context.Context) error {
		_, err := later.Reap(ctx, p)
		return err
	})
	e.wantInjected("Reap", fault.ReapBeforeCrashCount, err)
	for id, it := range before {
		if d := itemDiff(it, e.get(id)); d != "" {
			e.t.Errorf("after the fault item %s changed: %s", id, d)
		}
	}
	if k := e.sqlCount("SELECT COUNT(*) FROM {attempts}"); k != 0 {
		e.t.Errorf("after the fault: %d attempts recorded, want 0", k)
	}
	r, err := later.Reap(e.ctx, p)
	if err != nil || r.Crashed != n {
		e.t.Fatalf("Reap again = %+v, %v; want %d crashes", r, err, n)
	}
	for _, c := range cs {
		if it := e.get(c.ID); it.State != core.StateAvailable || it.CrashCount != 1 {
			e.t.Errorf("item %s after the pass: %s, %d crashes; want available, 1", c.ID, it.State, it.CrashCount)
		}
		e.wantHistory(c.ID, "1 crash")
	}
}

// A fault after a batch of deletes: what was deleted stays deleted, every
// item left keeps its history, and the next pass deletes the rest.
func faultRetain(e *env, action fault.Action) {
	const queue = "fp"
	// More than one batch of deletes: at most 100 a batch, or 250 where
	// ids bind as one list (PostgreSQL).
	const n = 260
	specs := make([]core.ItemSpec, n)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: queue, MaxAttempts: 2}
	}
	e.enqueue(e.s, specs...)
	o := e.owner(e.s)
	// Each item carries a failed attempt in its history.
	for _, c := range e.claimAll(e.s, o, queue, n) {
		if _, err := e.s.Fail(e.ctx, c, core.FailParams{Error: "first", RetryIn: time.Millisecond}); err != nil {
			e.t.Fatalf("Fail: %v", err)
		}
	}
	var done []core.Completion
	for _, c := range e.claimAll(e.at(time.Minute), o, queue, n) {
		done = append(done, core.Completion{Claim: c})
	}
	if lost, err := e.s.CompleteMany(e.ctx, done); err != nil || len(lost) != 0 {
		e.t.Fatalf("CompleteMany = lost %v, %v", lost, err)
	}
	later := e.at(2 * time.Hour)
	p := core.PurgeParams{OlderThan: time.Hour, Limit: core.MaxClaimLimit}
	var r core.PurgeResult
	err := e.injected(fault.RetainBetweenBatches, action, func(ctx context.Context) error {
		var err error
		r, err = later.Purge(ctx, p)
		return err
	})
	e.wantInjected("Purge", fault.RetainBetweenBatches, err)
	left := e.total(queue)
	if left <= 0 || left >= n {
		e.t.Fatalf("after the fault %d of %d items are left, want one batch deleted", left, n)
	}
	if action == fault.Error && int64(r.Items) != n-left {
		e.t.Errorf("the interrupted Purge reported %d items deleted, %d are gone", r.Items, n-left)
	}
	if h := e.sqlCount("SELECT COUNT(*) FROM {attempts}"); h != left {
		e.t.Errorf("after the fault %d attempts recorded for %d items left, want one each", h, left)
	}
	if orphans := e.sqlCount("SELECT COUNT(*) FROM {attempts} a WHERE NOT EXISTS (SELECT 1 FROM {items} i WHERE i.id = a.item_id)"); orphans != 0 {
		e.t.Errorf("after the fault %d attempts outlive their items", orphans)
	}
	r, err = later.Purge(e.ctx, p)
	if err != nil || int64(r.Items) != left || e.total(queue) != 0 || e.sqlCount("SELECT COUNT(*) FROM {attempts}") != 0 {
		e.t.Errorf("Purge again = %+v, %v; %d items and %d attempts left; want the %d left deleted with their history", r, err, e.total(queue), e.sqlCount("SELECT COUNT(*) FROM {attempts}"), left)
	}
}
