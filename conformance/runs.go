package conformance

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// Runs: a run is created once per key, inside the caller's transaction or
// the store's, together with its first items; its items, children and
// joins belong to it; a state change is a compare-and-set.
func testRuns(e *env) {
	e.run("CreateTxOncePerKey", func(e *env) {
		create := func(commit bool) (core.CreateRunResult, []core.EnqueueResult) {
			e.t.Helper()
			tx, err := e.s.Begin(e.ctx)
			if err != nil {
				e.t.Fatal(err)
			}
			defer tx.Rollback()
			rc, enq, err := e.s.CreateRunTx(e.ctx, tx, core.RunSpec{Name: "p", Key: "order-7", Input: json.RawMessage(`{"n":7}`)}, core.ItemSpec{Queue: "runs-first"})
			if err != nil {
				e.t.Fatalf("CreateRunTx: %v", err)
			}
			if commit {
				if err := tx.Commit(); err != nil {
					e.t.Fatal(err)
				}
			}
			return rc, enq
		}
		rolled, _ := create(false)
		if _, err := e.s.GetRun(e.ctx, rolled.ID); !errors.Is(err, core.ErrNotFound) {
			e.t.Fatalf("GetRun of a run whose transaction rolled back = %v, want ErrNotFound", err)
		}
		first, enq := create(true)
		if first.Existed || len(enq) != 1 {
			e.t.Fatalf("CreateRunTx committed = %+v, %v", first, enq)
		}
		again, enq2 := create(true)
		if !again.Existed || again.ID != first.ID || len(enq2) != 0 {
			e.t.Fatalf("CreateRunTx again with the key = %+v, %v; want run %s existing, nothing enqueued", again, enq2, first.ID)
		}
		if n := e.total("runs-first"); n != 1 {
			e.t.Fatalf("%d first items, want 1", n)
		}
		r, err := e.s.GetRun(e.ctx, first.ID)
		if err != nil || r.State != core.RunRunning || r.Name != "p" || r.Key != "order-7" || !jsonEqual(r.Input, []byte(`{"n":7}`)) {
			e.t.Fatalf("GetRun = %+v, %v", r, err)
		}
		if it := e.get(enq[0].ID); it.Run != first.ID {
			e.t.Fatalf("first item's run = %s, want %s", it.Run, first.ID)
		}
	})

	e.run("ChildrenAndJoinsInherit", func(e *env) {
		rc, enq, err := e.s.CreateRun(e.ctx, core.RunSpec{Name: "p"}, core.ItemSpec{Queue: "runs-p"})
		if err != nil {
			e.t.Fatal(err)
		}
		o := e.owner(e.s)
		b := e.fanOut(e.s, e.claimOne(e.s, o, "runs-p"), core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "runs-j"}}, kids("runs-k", "k", 3))
		if b.Run != rc.ID {
			e.t.Errorf("barrier's run = %s, want %s", b.Run, rc.ID)
		}
		for _, c := range e.claimAll(e.s, o, "runs-k", 3) {
			if c.Run != rc.ID {
				e.t.Errorf("child %s run = %s, want %s", c.ID, c.Run, rc.ID)
			}
			e.complete(e.s, c, "")
		}
		j := e.claimOne(e.s, o, "runs-j")
		if j.Run != rc.ID || e.get(j.ID).Run != rc.ID {
			e.t.Errorf("join's run = %s, want %s", j.Run, rc.ID)
		}
		var ids []uuid.UUID
		after := uuid.Nil
		for {
			page, err := e.s.RunItems(e.ctx, core.RunItemsParams{Run: rc.ID, After: after, Limit: 2})
			if err != nil {
				e.t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			for _, it := range page {
				ids = append(ids, it.ID)
			}
			after = page[len(page)-1].ID
		}
		if len(ids) != 5 || ids[0] != enq[0].ID {
			e.t.Fatalf("RunItems in pages of 2 = %d items starting %v; want 5 (parent, 3 children, join) from %s", len(ids), ids, enq[0].ID)
		}
	})

	e.run("UpdateIsCompareAndSet", func(e *env) {
		rc, _, err := e.s.CreateRun(e.ctx, core.RunSpec{Name: "p"})
		if err != nil {
			e.t.Fatal(err)
		}
		r, moved, err := e.s.UpdateRun(e.ctx, core.RunUpdate{Run: rc.ID, From: []core.RunState{core.RunHalted}, To: core.RunRunning})
		if err != nil || moved || r.State != core.RunRunning {
			e.t.Fatalf("UpdateRun from halted on a running run = %+v, %v, %v; want unmoved", r, moved, err)
		}
		r, moved, err = e.s.UpdateRun(e.ctx, core.RunUpdate{Run: rc.ID, From: []core.RunState{core.RunRunning}, To: core.RunCompleted, Output: json.RawMessage(`{"ok":true}`)})
		if err != nil || !moved || r.State != core.RunCompleted || !jsonEqual(r.Output, []byte(`{"ok":true}`)) || r.FinishedAt.IsZero() {
			e.t.Fatalf("UpdateRun to completed = %+v, %v, %v", r, moved, err)
		}
		if _, _, err := e.s.UpdateRun(e.ctx, core.RunUpdate{Run: rc.ID, From: []core.RunState{core.RunCompleted}, To: core.RunRunning}); !errors.Is(err, core.ErrInvalidInput) {
			e.t.Fatalf("UpdateRun from a final state = %v, want ErrInvalidInput", err)
		}
	})
}

// Chain handover: Then completes a member of a barrier and enqueues the
// next step in its place, in one transaction: the barrier's counts do not
// move, it cannot fire in between, and it fires once, when the last step
// of the chain finishes.
func testThen(e *env) {
	e.run("NextTakesBarrierPlace", func(e *env) {
		rc, _, err := e.s.CreateRun(e.ctx, core.RunSpec{Name: "p"}, core.ItemSpec{Queue: "then-p"})
		if err != nil {
			e.t.Fatal(err)
		}
		o := e.owner(e.s)
		b := e.fanOut(e.s, e.claimOne(e.s, o, "then-p"), core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "then-j"}}, kids("then-a", "a", 2))
		steps := e.claimAll(e.s, o, "then-a", 2)
		e.complete(e.s, steps[0], "")
		// The other child runs a chain of three steps.
		c := steps[1]
		for i, q := range []string{"then-b", "then-c"} {
			var next core.EnqueueResult
			held, err := e.s.Fence(e.ctx, c, func(ctx context.Context, f *core.Fenced) error {
				var err error
				next, err = f.Then(ctx, core.ItemSpec{Queue: q, Key: q}, json.RawMessage(`{"step":1}`))
				return err
			})
			if err != nil || !held {
				e.t.Fatalf("Then step %d: %v, %v", i, held, err)
			}
			if it := e.get(c.ID); it.State != core.StateCompleted || it.BarrierID != uuid.Nil {
				e.t.Fatalf("step %d after Then: %s, barrier %s; want completed, out of the barrier", i, it.State, it.BarrierID)
			}
			if got := e.barrier(b.ID); got.Fired() || got.Expected != 2 || got.Arrived != 1 || got.Failed != 0 || e.joinsOf(b.ID) != 0 {
				e.t.Fatalf("barrier after Then step %d: %+v, %d joins; want unfired, 1 of 2 arrived", i, got, e.joinsOf(b.ID))
			}
			c = e.claimOne(e.s, o, q)
			if c.ID != next.ID || c.BarrierID != b.ID || c.Run != rc.ID {
				e.t.Fatalf("next step %+v; want %s, member of %s, in run %s", c.Item, next.ID, b.ID, rc.ID)
			}
		}
		e.complete(e.s, c, "")
		if got := e.barrier(b.ID); !got.Fired() || got.Arrived != 2 || e.joinsOf(b.ID) != 1 {
			e.t.Fatalf("barrier after the chain's last step: %+v, %d joins; want fired once, 2 arrived", got, e.joinsOf(b.ID))
		}
	})

	e.run("KeyHeldChangesNothing", func(e *env) {
		e.enqueueOne(e.s, core.ItemSpec{Queue: "then-k", Key: "taken"})
		id := e.enqueueOne(e.s, core.ItemSpec{Queue: "then-x"})
		c := e.claimOne(e.s, e.owner(e.s), "then-x")
		held, err := e.s.Fence(e.ctx, c, func(ctx context.Context, f *core.Fenced) error {
			_, err := f.Then(ctx, core.ItemSpec{Queue: "then-k", Key: "taken"}, nil)
			return err
		})
		if !held || !errors.Is(err, core.ErrKeyConflict) {
			e.t.Fatalf("Then onto a held key = %v, %v; want ErrKeyConflict", held, err)
		}
		if it := e.get(id); it.State != core.StateClaimed {
			e.t.Fatalf("item after a refused Then: %s, want still claimed", it.State)
		}
	})
}

// Halts: an item of a run that dies halts the run in the same
// transaction, and enqueues the run's halt item once per halt; a fenced
// Halt does the same with the caller's reason.
func testHalts(e *env) {
	e.run("DeathHaltsRunOnce", func(e *env) {
		rc, _, err := e.s.CreateRun(e.ctx, core.RunSpec{Name: "p", OnHalt: &core.HaltItem{Queue: "halt-notes"}},
			core.ItemSpec{Queue: "halt-a", MaxAttempts: 1}, core.ItemSpec{Queue: "halt-a", MaxAttempts: 1})
		if err != nil {
			e.t.Fatal(err)
		}
		o := e.owner(e.s)
		cs := e.claimAll(e.s, o, "halt-a", 2)
		if dead, err := e.s.Fail(e.ctx, cs[0], core.FailParams{Error: "boom"}); err != nil || !dead {
			e.t.Fatalf("Fail on the last attempt = %v, %v", dead, err)
		}
		r, err := e.s.GetRun(e.ctx, rc.ID)
		if err != nil || r.State != core.RunHalted || r.HaltReason != core.HaltAttemptsExhausted || r.HaltID == uuid.Nil {
			e.t.Fatalf("run after a death = %+v, %v; want halted, %s", r, err, core.HaltAttemptsExhausted)
		}
		// A second death while halted is not a second halt.
		if _, err := e.s.Fail(e.ctx, cs[1], core.FailParams{Error: "boom", Discard: true}); err != nil {
			e.t.Fatal(err)
		}
		notes := e.claimAll(e.s, o, "halt-notes", 1)
		var n core.HaltNotice
		if err := json.Unmarshal(notes[0].Payload, &n); err != nil || n.Run != rc.ID || n.HaltID != r.HaltID || n.Item != cs[0].ID || n.Reason != core.HaltAttemptsExhausted {
			e.t.Fatalf("halt item payload %s (%v); want run %s, halt %s, item %s", notes[0].Payload, err, rc.ID, r.HaltID, cs[0].ID)
		}
		if notes[0].Key != "halt/"+r.HaltID.String() {
			e.t.Errorf("halt item key %q, want halt/%s", notes[0].Key, r.HaltID)
		}
	})

	// One halt, one record: the run's row holds what its notice says, the
	// dead item's last error as the detail and the item itself, whether it
	// died on its last attempt or was discarded; a revive clears both.
	e.run("RecordMatchesItsNotice", func(e *env) {
		o := e.owner(e.s)
		for _, discard := range []bool{false, true} {
			// Each case has its own queue: the first's item, revived, is
			// available again.
			queue := map[bool]string{false: "rec-last", true: "rec-discard"}[discard]
			rc, _, err := e.s.CreateRun(e.ctx, core.RunSpec{Name: "p", OnHalt: &core.HaltItem{Queue: "rec-notes"}}, core.ItemSpec{Queue: queue, MaxAttempts: map[bool]int{false: 1, true: 3}[discard]})
			if err != nil {
				e.t.Fatal(err)
			}
			c := e.claimOne(e.s, o, queue)
			if _, err := e.s.Fail(e.ctx, c, core.FailParams{Error: "disk full", Discard: discard}); err != nil {
				e.t.Fatal(err)
			}
			r, err := e.s.GetRun(e.ctx, rc.ID)
			if err != nil || r.State != core.RunHalted || r.HaltDetail != "disk full" || r.HaltItemID != c.ID {
				e.t.Fatalf("discard %v: run after the death = %s, detail %q, item %s, %v; want halted, \"disk full\", %s", discard, r.State, r.HaltDetail, r.HaltItemID, err, c.ID)
			}
			var n core.HaltNotice
			if err := json.Unmarshal(e.claimOne(e.s, o, "rec-notes").Payload, &n); err != nil {
				e.t.Fatal(err)
			}
			if n != (core.HaltNotice{Run: rc.ID, HaltID: r.HaltID, Reason: r.HaltReason, Detail: r.HaltDetail, Item: r.HaltItemID}) {
				e.t.Errorf("discard %v: notice %+v, run's halt (%s, %q, %q, %s)", discard, n, r.HaltID, r.HaltReason, r.HaltDetail, r.HaltItemID)
			}
			if _, err := e.s.ReviveRun(e.ctx, rc.ID); err != nil {
				e.t.Fatal(err)
			}
			if r, err := e.s.GetRun(e.ctx, rc.ID); err != nil || r.HaltDetail != "" || r.HaltItemID != uuid.Nil || r.HaltID != uuid.Nil {
				e.t.Errorf("discard %v: run after revive: %+v, %v; want its halt cleared", discard, r, err)
			}
		}
	})

	e.run("FencedHaltWithReason", func(e *env) {
		rc, _, err := e.s.CreateRun(e.ctx, core.RunSpec{Name: "p", OnHalt: &core.HaltItem{Queue: "halt-notes"}}, core.ItemSpec{Queue: "halt-r"})
		if err != nil {
			e.t.Fatal(err)
		}
		o := e.owner(e.s)
		c := e.claimOne(e.s, o, "halt-r")
		var h core.HaltResult
		held, err := e.s.Fence(e.ctx, c, func(ctx context.Context, f *core.Fenced) error {
			var err error
			h, err = f.Halt(ctx, core.HaltParams{Reason: "no_route", Detail: "output matched no branch"})
			return err
		})
		if err != nil || !held || h.HaltID == uuid.Nil {
			e.t.Fatalf("Fenced.Halt = %+v, %v, %v", h, held, err)
		}
		r, err := e.s.GetRun(e.ctx, rc.ID)
		if err != nil || r.State != core.RunHalted || r.HaltReason != "no_route" || r.HaltDetail != "output matched no branch" || r.HaltID != h.HaltID || r.HaltItemID != c.ID {
			e.t.Fatalf("run after Halt = %+v, %v", r, err)
		}
		if it := e.get(c.ID); it.State != core.StateDead {
			e.t.Fatalf("halting item is %s, want dead", it.State)
		}
		e.wantHistory(c.ID, "1 failed no_route")
		if n := e.total("halt-notes"); n != 1 {
			e.t.Fatalf("%d halt items, want 1", n)
		}
	})
}
