package conformance

import (
	"errors"

	"github.com/plenumdb/plenum/core"
)

// Revive: reviving a halted run revives its dead items, history kept; a
// dead child whose barrier fired re-arms the barrier, whose join runs
// again, with the new results, under a new generation; the first join
// leaves the barrier above, so that barrier counts the second one only.
func testReviveRun(e *env) {
	e.run("ReArmsFiredBarrier", func(e *env) {
		rc, _, err := e.s.CreateRun(e.ctx, core.RunSpec{Name: "p"}, core.ItemSpec{Queue: "rv-g"})
		if err != nil {
			e.t.Fatal(err)
		}
		o := e.owner(e.s)
		// G fans out into P, which fans out into three children.
		gb := e.fanOut(e.s, e.claimOne(e.s, o, "rv-g"), core.BarrierSpec{Name: "g", Join: core.JoinSpec{Queue: "rv-gj"}, OnChildFailure: core.FailBarrier}, kids("rv-p", "p", 1))
		pb := e.fanOut(e.s, e.claimOne(e.s, o, "rv-p"), core.BarrierSpec{Name: "p", Join: core.JoinSpec{Queue: "rv-pj"}, OnChildFailure: core.FailBarrier}, kids("rv-k", "k", 3))
		ks := e.claimAll(e.s, o, "rv-k", 3)
		e.complete(e.s, ks[0], `"ok"`)
		e.complete(e.s, ks[1], `"ok"`)
		if _, err := e.s.Fail(e.ctx, ks[2], core.FailParams{Error: "first try", Discard: true}); err != nil {
			e.t.Fatal(err)
		}
		// P's barrier fired its join dead, which fired G's barrier (its join
		// dead too); the run halted.
		first := e.barrier(pb.ID)
		if !first.Fired() || e.get(first.JoinItemID).State != core.StateDead || !e.barrier(gb.ID).Fired() {
			e.t.Fatalf("before the revive: P %+v, G %+v; want both fired, joins dead", first, e.barrier(gb.ID))
		}
		if r, _ := e.s.GetRun(e.ctx, rc.ID); r.State != core.RunHalted {
			e.t.Fatalf("run is %s, want halted", r.State)
		}

		rev, err := e.s.ReviveRun(e.ctx, rc.ID)
		if err != nil || rev.Items != 1 || rev.Barriers != 2 {
			e.t.Fatalf("ReviveRun = %+v, %v; want 1 item revived, 2 barriers re-armed", rev, err)
		}
		if r, _ := e.s.GetRun(e.ctx, rc.ID); r.State != core.RunRunning || r.HaltReason != "" {
			e.t.Fatalf("run after ReviveRun: %s (%q), want running", r.State, r.HaltReason)
		}
		again := e.barrier(pb.ID)
		if again.Fired() || again.Generation != 1 || again.Arrived != 2 || again.Failed != 0 || again.Expected != 3 {
			e.t.Fatalf("P's barrier after ReviveRun: %+v; want unfired, generation 1, 2 of 3 arrived", again)
		}
		if g := e.barrier(gb.ID); g.Fired() || g.Failed != 0 || g.Expected != 1 {
			e.t.Fatalf("G's barrier after ReviveRun: %+v; want unfired, nothing failed, 1 expected", g)
		}
		k := e.claimOne(e.s, o, "rv-k")
		if k.ID != ks[2].ID || k.Attempt != 1 {
			e.t.Fatalf("claimed %s attempt %d; want the revived %s on a fresh attempt", k.ID, k.Attempt, ks[2].ID)
		}
		e.wantHistory(k.ID, "1 failed first try")
		e.complete(e.s, k, `"ok"`)
		pj := e.claimOne(e.s, o, "rv-pj")
		if pj.ID == first.JoinItemID || pj.JoinOf != pb.ID {
			e.t.Fatalf("second join %s (of %s); want a new join of %s", pj.ID, pj.JoinOf, pb.ID)
		}
		for _, c := range e.children(pb.ID) {
			if c.State != core.StateCompleted {
				e.t.Errorf("the second join sees child %s %s, want completed", c.ID, c.State)
			}
		}
		e.complete(e.s, pj, "")
		g := e.barrier(gb.ID)
		if !g.Fired() || g.Arrived != 1 || g.Failed != 0 || e.joinsOf(gb.ID) != 2 {
			e.t.Fatalf("G's barrier at the end: %+v, %d joins; want fired again, the second join arrived", g, e.joinsOf(gb.ID))
		}
		if j := e.claimOne(e.s, o, "rv-gj"); j.JoinOf != gb.ID {
			e.t.Fatalf("G's second join %+v", j.Item)
		}
	})

	e.run("ReviveBarrierRefusals", func(e *env) {
		o := e.owner(e.s)
		e.enqueueOne(e.s, core.ItemSpec{Queue: "rvb-p"})
		b := e.fanOut(e.s, e.claimOne(e.s, o, "rvb-p"), core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "rvb-j"}}, kids("rvb-k", "k", 1))
		if _, err := e.s.ReviveBarrier(e.ctx, b.ID); !errors.Is(err, core.ErrNotFired) {
			e.t.Fatalf("ReviveBarrier of an unfired barrier = %v, want ErrNotFired", err)
		}
		e.complete(e.s, e.claimOne(e.s, o, "rvb-k"), "")
		e.complete(e.s, e.claimOne(e.s, o, "rvb-j"), "")
		if _, err := e.s.ReviveBarrier(e.ctx, b.ID); !errors.Is(err, core.ErrFinished) {
			e.t.Fatalf("ReviveBarrier whose join completed = %v, want ErrFinished", err)
		}
	})
	// A run halts as soon as a child dies, while its siblings still run:
	// reviving it then (the whole run, or the one item) takes the failure
	// back before the barrier can fire on it, so that the siblings'
	// completions fire a live join and the run is not halted again.
	for _, one := range []bool{false, true} {
		name := "BeforeSiblingsFinish_Run"
		if one {
			name = "BeforeSiblingsFinish_Item"
		}
		e.run(name, func(e *env) {
			rc, _, err := e.s.CreateRun(e.ctx, core.RunSpec{Name: "p"}, core.ItemSpec{Queue: "rs-p"})
			if err != nil {
				e.t.Fatal(err)
			}
			o := e.owner(e.s)
			b := e.fanOut(e.s, e.claimOne(e.s, o, "rs-p"), core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "rs-j"}, OnChildFailure: core.FailBarrier}, kids("rs-k", "k", 3))
			ks := e.claimAll(e.s, o, "rs-k", 3)
			if _, err := e.s.Fail(e.ctx, ks[0], core.FailParams{Error: "broken", Discard: true}); err != nil {
				e.t.Fatal(err)
			}
			if r, _ := e.s.GetRun(e.ctx, rc.ID); r.State != core.RunHalted || r.HaltReason != core.HaltAttemptsExhausted {
				e.t.Fatalf("run is %s (%q), want halted by the child's attempts", r.State, r.HaltReason)
			}
			var rev core.ReviveRunResult
			if one {
				rev, err = e.s.ReviveRunItem(e.ctx, rc.ID, ks[0].ID)
			} else {
				rev, err = e.s.ReviveRun(e.ctx, rc.ID)
			}
			if err != nil || rev.Items != 1 || rev.Barriers != 0 {
				e.t.Fatalf("revive = %+v, %v; want the one item revived, no barrier re-armed", rev, err)
			}
			e.complete(e.s, ks[1], `"ok"`)
			e.complete(e.s, ks[2], `"ok"`)
			if got := e.barrier(b.ID); got.Fired() || got.Failed != 0 || got.Arrived != 2 {
				e.t.Fatalf("barrier %+v; want unfired, 2 arrived, nothing failed", got)
			}
			e.complete(e.s, e.claimOne(e.s, o, "rs-k"), `"ok"`)
			j := e.claimOne(e.s, o, "rs-j")
			if j.JoinOf != b.ID {
				e.t.Fatalf("claimed %+v, want the live join of %s", j.Item, b.ID)
			}
			if r, _ := e.s.GetRun(e.ctx, rc.ID); r.State != core.RunRunning {
				e.t.Fatalf("run is %s (%q), want running", r.State, r.HaltReason)
			}
		})
	}

	// A halted run with nothing dead to revive and nothing left to run is
	// refused, and stays halted: running, it would never move again. One
	// with an item left to run goes back to running.
	e.run("NothingToReviveRefused", func(e *env) {
		for _, left := range []bool{false, true} {
			var first []core.ItemSpec
			if left {
				first = append(first, core.ItemSpec{Queue: "ntr"})
			}
			rc, _, err := e.s.CreateRun(e.ctx, core.RunSpec{Name: "p"}, first...)
			if err != nil {
				e.t.Fatal(err)
			}
			if _, moved, err := e.s.UpdateRun(e.ctx, core.RunUpdate{Run: rc.ID, From: []core.RunState{core.RunRunning}, To: core.RunHalted, HaltReason: "stop"}); err != nil || !moved {
				e.t.Fatalf("UpdateRun to halted = %v, %v", moved, err)
			}
			_, err = e.s.ReviveRun(e.ctx, rc.ID)
			r, gerr := e.s.GetRun(e.ctx, rc.ID)
			if gerr != nil {
				e.t.Fatal(gerr)
			}
			switch {
			case !left && (!errors.Is(err, core.ErrNothingToRevive) || r.State != core.RunHalted):
				e.t.Errorf("ReviveRun of a run with nothing to run = %v, run %s; want ErrNothingToRevive, still halted", err, r.State)
			case left && (err != nil || r.State != core.RunRunning):
				e.t.Errorf("ReviveRun of a run with an item to run = %v, run %s; want running", err, r.State)
			}
		}
	})

	e.run("ReviveRunItemRefusals", func(e *env) {
		rc, en, err := e.s.CreateRun(e.ctx, core.RunSpec{Name: "p"}, core.ItemSpec{Queue: "rri"})
		if err != nil {
			e.t.Fatal(err)
		}
		if _, err := e.s.ReviveRunItem(e.ctx, rc.ID, en[0].ID); !errors.Is(err, core.ErrNotDead) {
			e.t.Fatalf("ReviveRunItem of an available item = %v, want ErrNotDead", err)
		}
		other := e.enqueueOne(e.s, core.ItemSpec{Queue: "rri"})
		if _, err := e.s.ReviveRunItem(e.ctx, rc.ID, other); !errors.Is(err, core.ErrNotFound) {
			e.t.Fatalf("ReviveRunItem of an item of no run = %v, want ErrNotFound", err)
		}
	})
}
