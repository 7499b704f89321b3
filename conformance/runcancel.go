package conformance

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/plenumdb/plenum/core"
)

// CancelRun: every unfinished item of the run ends cancelled (a waiter,
// a holder, items not yet claimed), holders lose their claims (Lost
// reports them), the cancellations count at their barriers, a barrier that
// fires then makes its join cancelled, an Expand of a cancelled parent
// stops, and the run ends cancelled.
func testCancelRun(e *env) {
	rc, _, err := e.s.CreateRun(e.ctx, core.RunSpec{Name: "p"},
		core.ItemSpec{Queue: "cr-p"}, core.ItemSpec{Queue: "cr-w"}, core.ItemSpec{Queue: "cr-e"}, core.ItemSpec{Queue: "cr-idle"})
	if err != nil {
		e.t.Fatal(err)
	}
	other := e.enqueueOne(e.s, core.ItemSpec{Queue: "cr-idle"})
	o := e.owner(e.s)
	b := e.fanOut(e.s, e.claimOne(e.s, o, "cr-p"), core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "cr-j"}}, kids("cr-k", "k", 3))
	ks := e.claimAll(e.s, o, "cr-k", 3)
	e.complete(e.s, ks[0], "")
	held := ks[1] // still running when the run is cancelled; ks[2] too
	if r := e.await(e.s, e.claimOne(e.s, o, "cr-w"), core.AwaitParams{Name: "never"}); !r.Waiting {
		e.t.Fatalf("Await = %+v", r)
	}
	// An Expand whose second page comes after the cancel stops there.
	ex := e.claimOne(e.s, o, "cr-e")
	pages := 0
	var cancelled core.CancelRunResult
	_, expandErr := e.s.Expand(e.ctx, ex, core.ExpandParams{
		Barrier: core.BarrierSpec{Name: "x", Join: core.JoinSpec{Queue: "cr-xj"}},
		Next: func(_ context.Context, cursor string) (core.ChildPage, error) {
			pages++
			if cursor == "" {
				return core.ChildPage{Children: kids("cr-x", "a", 2), Next: "1"}, nil
			}
			var err error
			if cancelled, err = e.s.CancelRun(e.ctx, rc.ID); err != nil {
				e.t.Errorf("CancelRun: %v", err)
			}
			return core.ChildPage{Children: kids("cr-x", "b", 2), Next: "2", Done: true}, nil
		},
		CompleteParent: true,
	})
	if !errors.Is(expandErr, core.ErrClaimLost) {
		e.t.Fatalf("Expand across CancelRun = %v, want ErrClaimLost", expandErr)
	}

	// Two children held, the waiter, the idle item, the expanding parent
	// and its first page's two children: the join the barrier fired was
	// born cancelled, never available to a claim.
	if cancelled.Items != 7 {
		e.t.Errorf("CancelRun cancelled %d items, want 7 (a join born cancelled is not among them)", cancelled.Items)
	}
	r, err := e.s.GetRun(e.ctx, rc.ID)
	if err != nil || r.State != core.RunCancelled || r.FinishedAt.IsZero() {
		e.t.Fatalf("run after CancelRun = %+v, %v", r, err)
	}
	lost, err := e.s.Lost(e.ctx, []core.Claim{held, ks[2]})
	if err != nil || !slices.Contains(lost, held.ID) || !slices.Contains(lost, ks[2].ID) {
		e.t.Fatalf("Lost of the run's holders = %v, %v; want both", lost, err)
	}
	if err := e.s.Complete(e.ctx, held, nil); !errors.Is(err, core.ErrClaimLost) {
		e.t.Errorf("a holder's Complete after CancelRun = %v, want ErrClaimLost", err)
	}
	for after := (core.Item{}).ID; ; {
		page, err := e.s.RunItems(e.ctx, core.RunItemsParams{Run: rc.ID, After: after, Limit: 100})
		if err != nil {
			e.t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, it := range page {
			if !it.State.Terminal() {
				e.t.Errorf("item %s (%s) of the cancelled run is %s", it.ID, it.Queue, it.State)
			}
		}
		after = page[len(page)-1].ID
	}
	if it := e.get(other); it.State != core.StateAvailable {
		e.t.Errorf("an item of no run is %s after CancelRun, want available", it.State)
	}
	// The barrier counted the cancellations and fired once, its join
	// born cancelled; nothing of the run is claimable.
	got := e.barrier(b.ID)
	if !got.Fired() || got.Arrived != 1 || got.Failed != 2 || e.joinsOf(b.ID) != 1 {
		e.t.Fatalf("barrier after CancelRun: %+v, %d joins; want fired once, 1 arrived, 2 failed", got, e.joinsOf(b.ID))
	}
	if j := e.get(got.JoinItemID); j.State != core.StateCancelled {
		e.t.Fatalf("join of a cancelled run's barrier is %s, want cancelled", j.State)
	}
	for _, q := range []string{"cr-j", "cr-x", "cr-xj", "cr-w", "cr-k"} {
		if cs := e.claim(e.at(400*24*time.Hour), o, q, 10); len(cs) != 0 {
			e.t.Errorf("claimed %d items of %s after CancelRun", len(cs), q)
		}
	}
	if again, err := e.s.CancelRun(e.ctx, rc.ID); err != nil || again.Items != 0 {
		e.t.Errorf("CancelRun again = %+v, %v; want nothing left to cancel", again, err)
	}
	if _, err := e.s.Signal(e.ctx, core.SignalSpec{Run: rc.ID, Name: "never", Key: "k"}); !errors.Is(err, core.ErrRunFinished) {
		e.t.Errorf("Signal to a cancelled run = %v, want ErrRunFinished", err)
	}
}
