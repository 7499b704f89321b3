package conformance

import (
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// Retention keeps what a run that has not finished can still revive or
// resume, whatever its age: every item and barrier of a halted or a
// waiting run, and the dead items of a running one (a partial revive left
// them for a later ReviveRun). Items of finished runs, and of no run, go
// as before; once a kept run is cancelled or completed, its items and
// barriers go at the next pass.
func testPurgeKeepsUnfinishedRuns(e *env) {
	o := e.owner(e.s)
	// A run halted by its join's death: the parent, three completed
	// children, the dead join and the fired barrier.
	halted, _, err := e.s.CreateRun(e.ctx, core.RunSpec{Name: "p"}, core.ItemSpec{Queue: "pr-p"})
	if err != nil {
		e.t.Fatal(err)
	}
	b := e.fanOut(e.s, e.claimOne(e.s, o, "pr-p"), core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "pr-j"}}, kids("pr-k", "k", 3))
	for _, k := range e.claimAll(e.s, o, "pr-k", 3) {
		e.complete(e.s, k, `"ok"`)
	}
	join := e.claimOne(e.s, o, "pr-j")
	if _, err := e.s.Fail(e.ctx, join, core.FailParams{Error: "join broken", Discard: true}); err != nil {
		e.t.Fatal(err)
	}
	if r, _ := e.s.GetRun(e.ctx, halted.ID); r.State != core.RunHalted {
		e.t.Fatalf("run is %s, want halted by its join", r.State)
	}
	keptHalted := append([]uuid.UUID{join.ID}, idsOf(e.children(b.ID))...)

	// A waiting run with a completed item.
	waiting, en, err := e.s.CreateRun(e.ctx, core.RunSpec{Name: "p"}, core.ItemSpec{Queue: "pr-w"})
	if err != nil {
		e.t.Fatal(err)
	}
	e.complete(e.s, e.claimOne(e.s, o, "pr-w"), "")
	if _, moved, err := e.s.UpdateRun(e.ctx, core.RunUpdate{Run: waiting.ID, From: []core.RunState{core.RunRunning}, To: core.RunWaiting}); err != nil || !moved {
		e.t.Fatalf("UpdateRun to waiting = %v, %v", moved, err)
	}
	keptWaiting := en[0].ID

	// A running run that one item's revive brought back, its other dead
	// item left for a later ReviveRun.
	running, _, err := e.s.CreateRun(e.ctx, core.RunSpec{Name: "p"}, core.ItemSpec{Queue: "pr-r", MaxAttempts: 1}, core.ItemSpec{Queue: "pr-r", MaxAttempts: 1})
	if err != nil {
		e.t.Fatal(err)
	}
	rs := e.claimAll(e.s, o, "pr-r", 2)
	for _, c := range rs {
		if _, err := e.s.Fail(e.ctx, c, core.FailParams{Error: "x"}); err != nil {
			e.t.Fatal(err)
		}
	}
	if _, err := e.s.ReviveRunItem(e.ctx, running.ID, rs[0].ID); err != nil {
		e.t.Fatal(err)
	}
	keptRunning := rs[1].ID

	// A completed run and an item of no run: retention takes them.
	done, den, err := e.s.CreateRun(e.ctx, core.RunSpec{Name: "p"}, core.ItemSpec{Queue: "pr-d"})
	if err != nil {
		e.t.Fatal(err)
	}
	e.complete(e.s, e.claimOne(e.s, o, "pr-d"), "")
	if _, _, err := e.s.UpdateRun(e.ctx, core.RunUpdate{Run: done.ID, From: []core.RunState{core.RunRunning}, To: core.RunCompleted}); err != nil {
		e.t.Fatal(err)
	}
	loose := e.enqueueOne(e.s, core.ItemSpec{Queue: "pr-l"})
	e.complete(e.s, e.claimOne(e.s, o, "pr-l"), "")

	later := e.at(2 * time.Hour)
	purge := func() core.PurgeResult {
		e.t.Helper()
		r, err := later.Purge(e.ctx, core.PurgeParams{OlderThan: time.Hour})
		if err != nil {
			e.t.Fatalf("Purge: %v", err)
		}
		return r
	}
	if r := purge(); r != (core.PurgeResult{Items: 2}) {
		e.t.Errorf("Purge = %+v; want the completed run's item and the loose one, nothing of the unfinished runs", r)
	}
	for _, id := range []uuid.UUID{den[0].ID, loose} {
		if _, err := e.s.Get(e.ctx, id); !errors.Is(err, core.ErrNotFound) {
			e.t.Errorf("item %s of a finished run or of none, after Purge: %v; want ErrNotFound", id, err)
		}
	}
	for _, id := range append(keptHalted, keptWaiting, keptRunning) {
		if _, err := e.s.Get(e.ctx, id); err != nil {
			e.t.Errorf("item %s of an unfinished run after Purge: %v; want it kept", id, err)
		}
	}
	if _, err := e.s.GetBarrier(e.ctx, b.ID); err != nil {
		e.t.Errorf("the halted run's fired barrier after Purge: %v; want it kept", err)
	}

	// The halted run revives: its join runs again, on all its children.
	if rev, err := e.s.ReviveRun(e.ctx, halted.ID); err != nil || rev.Items != 1 {
		e.t.Fatalf("ReviveRun after Purge = %+v, %v; want the join revived", rev, err)
	}
	j := e.claimOne(e.s, o, "pr-j")
	if j.ID != join.ID || len(e.children(b.ID)) != 3 {
		e.t.Fatalf("claimed %+v with %d children; want the join %s of %s over 3", j.Item, len(e.children(b.ID)), join.ID, b.ID)
	}
	e.complete(e.s, j, "")

	// Finished, each run's items go at the next pass.
	if _, _, err := e.s.UpdateRun(e.ctx, core.RunUpdate{Run: halted.ID, From: []core.RunState{core.RunRunning}, To: core.RunCompleted}); err != nil {
		e.t.Fatal(err)
	}
	for _, run := range []uuid.UUID{waiting.ID, running.ID} {
		if _, err := e.s.CancelRun(e.ctx, run); err != nil {
			e.t.Fatal(err)
		}
	}
	// The halted run's barrier goes, then its children, its join and the
	// parent; the waiting run's item, the running run's two.
	if r := purge(); r != (core.PurgeResult{Items: 8, Barriers: 1}) {
		e.t.Errorf("Purge once the runs finished = %+v; want 8 items and 1 barrier", r)
	}
}

func idsOf(items []core.Item) []uuid.UUID {
	out := make([]uuid.UUID, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}
