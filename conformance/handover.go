package conformance

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// Guarantee 6: a parent that expands without completing in the sealing
// transaction stays a member of its own barrier, and its sub-fan-in's join
// joins that barrier too, so the barrier above fires only after both have
// finished: the parent's join never runs before the parent and its
// sub-fan-in are done, whichever finishes last, and sees the parent's
// failure.
func testFanInHandover(e *env) {
	// G fans out into C1 and C2; C1 completes; C2 expands into X (two
	// children) without completing, and stays claimed.
	setup := func(e *env) (gb core.Barrier, c2 core.Claim, o uuid.UUID) {
		e.enqueueOne(e.s, core.ItemSpec{Queue: "h-g"})
		o = e.owner(e.s)
		gb = e.fanOut(e.s, e.claimOne(e.s, o, "h-g"), core.BarrierSpec{Name: "g", Join: core.JoinSpec{Queue: "h-gjoin"}}, kids("h-c", "c", 2))
		cs := e.claimAll(e.s, o, "h-c", 2)
		e.complete(e.s, cs[0], "")
		c2 = cs[1]
		r, err := e.s.Expand(e.ctx, c2, core.ExpandParams{
			Barrier: core.BarrierSpec{Name: "x", Join: core.JoinSpec{Queue: "h-xjoin"}},
			Next: func(context.Context, string) (core.ChildPage, error) {
				return core.ChildPage{Children: kids("h-x", "x", 2), Next: "end", Done: true}, nil
			},
		})
		if err != nil || !r.Barrier.Sealed || r.Barrier.ParentBarrierID != gb.ID {
			e.t.Fatalf("Expand(C2) without completing: %v, barrier %+v; want sealed, reporting to %s", err, r.Barrier, gb.ID)
		}
		if it := e.get(c2.ID); it.State != core.StateClaimed || it.BarrierID != gb.ID {
			e.t.Errorf("C2 after expanding without completing: %s, barrier %s; want claimed, still a member of %s", it.State, it.BarrierID, gb.ID)
		}
		return gb, c2, o
	}
	notFired := func(e *env, gb core.Barrier, when string) {
		e.t.Helper()
		if b := e.barrier(gb.ID); b.Fired() || e.joinsOf(gb.ID) != 0 {
			e.t.Fatalf("%s: G's barrier fired (arrived %d, failed %d of %d), %d joins; want it waiting", when, b.Arrived, b.Failed, b.Expected, e.joinsOf(gb.ID))
		}
	}
	finishSub := func(e *env, o uuid.UUID) {
		e.t.Helper()
		for _, c := range e.claimAll(e.s, o, "h-x", 2) {
			e.complete(e.s, c, "")
		}
		e.complete(e.s, e.claimOne(e.s, o, "h-xjoin"), "")
	}
	fired := func(e *env, gb core.Barrier, arrived, failed int64) {
		e.t.Helper()
		b := e.barrier(gb.ID)
		if !b.Fired() || e.joinsOf(gb.ID) != 1 || b.Arrived != arrived || b.Failed != failed || b.Expected != arrived+failed {
			e.t.Fatalf("G's barrier at the end: fired %v, %d joins, arrived %d, failed %d of %d; want fired once, %d arrived, %d failed",
				b.Fired(), e.joinsOf(gb.ID), b.Arrived, b.Failed, b.Expected, arrived, failed)
		}
	}

	e.run("ParentCompletesLast", func(e *env) {
		gb, c2, o := setup(e)
		finishSub(e, o)
		notFired(e, gb, "sub-fan-in done, C2 still running")
		e.complete(e.s, c2, "")
		fired(e, gb, 3, 0) // C1, C2 and X's join
	})

	e.run("ParentDiesLast", func(e *env) {
		gb, c2, o := setup(e)
		finishSub(e, o)
		notFired(e, gb, "sub-fan-in done, C2 still running")
		if dead, err := e.s.Fail(e.ctx, c2, core.FailParams{Error: "boom", Discard: true}); err != nil || !dead {
			e.t.Fatalf("Fail(C2, Discard) = %v, %v", dead, err)
		}
		fired(e, gb, 2, 1)
		var sawDead bool
		for _, c := range e.children(gb.ID) {
			sawDead = sawDead || (c.ID == c2.ID && c.State == core.StateDead)
		}
		if !sawDead {
			e.t.Errorf("G's join reading its children does not see C2 dead")
		}
	})

	e.run("SubFanInFinishesLast", func(e *env) {
		gb, c2, o := setup(e)
		e.complete(e.s, c2, "")
		notFired(e, gb, "C2 completed, its sub-fan-in pending")
		for _, c := range e.claimAll(e.s, o, "h-x", 2) {
			e.complete(e.s, c, "")
		}
		notFired(e, gb, "X fired, its join not run yet")
		e.complete(e.s, e.claimOne(e.s, o, "h-xjoin"), "")
		fired(e, gb, 3, 0)
	})

	e.run("SubJoinDies", func(e *env) {
		gb, c2, o := setup(e)
		e.complete(e.s, c2, "")
		for _, c := range e.claimAll(e.s, o, "h-x", 2) {
			e.complete(e.s, c, "")
		}
		if dead, err := e.s.Fail(e.ctx, e.claimOne(e.s, o, "h-xjoin"), core.FailParams{Discard: true}); err != nil || !dead {
			e.t.Fatalf("Fail(X's join, Discard) = %v, %v", dead, err)
		}
		fired(e, gb, 2, 1)
	})

	e.run("SealThenCompleteInOneFence", func(e *env) {
		// Through the handle: the join takes C2's place at G's barrier.
		e.enqueueOne(e.s, core.ItemSpec{Queue: "h-g"})
		o := e.owner(e.s)
		gb := e.fanOut(e.s, e.claimOne(e.s, o, "h-g"), core.BarrierSpec{Name: "g", Join: core.JoinSpec{Queue: "h-gjoin"}}, kids("h-c", "c", 2))
		cs := e.claimAll(e.s, o, "h-c", 2)
		e.complete(e.s, cs[0], "")
		held, err := e.s.Fence(e.ctx, cs[1], func(ctx context.Context, f *core.Fenced) error {
			b, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: "x", Join: core.JoinSpec{Queue: "h-xjoin"}})
			if err != nil {
				return err
			}
			if _, err := f.AddChildren(ctx, core.AddChildrenParams{Barrier: b.ID, To: "end", Children: kids("h-x", "x", 2)}); err != nil {
				return err
			}
			if _, err := f.Seal(ctx, b.ID); err != nil {
				return err
			}
			return f.Complete(ctx, nil)
		})
		if !held || err != nil {
			e.t.Fatalf("fence sealing and completing C2 = held %v, %v", held, err)
		}
		if it := e.get(cs[1].ID); it.State != core.StateCompleted || it.BarrierID != uuid.Nil {
			e.t.Errorf("C2 after sealing and completing: %s, barrier %s; want completed, its place handed to its join", it.State, it.BarrierID)
		}
		if b := e.barrier(gb.ID); b.Expected != 2 || b.Arrived != 1 {
			e.t.Errorf("G's barrier after the hand-over: arrived %d of %d, want 1 of 2", b.Arrived, b.Expected)
		}
		for _, c := range e.claimAll(e.s, o, "h-x", 2) {
			e.complete(e.s, c, "")
		}
		notFired(e, gb, "X fired, its join not run yet")
		e.complete(e.s, e.claimOne(e.s, o, "h-xjoin"), "")
		fired(e, gb, 2, 0)
	})

	e.run("SealAfterCompleteRefused", func(e *env) {
		const queue = "h-late"
		id := e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
		c := e.claimOne(e.s, e.owner(e.s), queue)
		held, err := e.s.Fence(e.ctx, c, func(ctx context.Context, f *core.Fenced) error {
			b, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: "late", Join: core.JoinSpec{Queue: "h-late-join"}})
			if err != nil {
				return err
			}
			if err := f.Complete(ctx, nil); err != nil {
				return err
			}
			_, err = f.Seal(ctx, b.ID)
			return err
		})
		if !held || !errors.Is(err, core.ErrInvalidInput) {
			e.t.Fatalf("Seal after Complete in one fence = held %v, %v; want ErrInvalidInput", held, err)
		}
		if it := e.get(id); it.State != core.StateClaimed {
			e.t.Errorf("item after the refused fence: %s, want claimed (nothing committed)", it.State)
		}
	})
}
