package conformance

import (
	"context"
	"time"

	"github.com/plenumdb/plenum/core"
)

// History: an item's attempts, each with its error, stay readable after
// the item is cancelled while it runs, and after it is revived, dies
// again and is revived with its run.
func testRunHistory(e *env) {
	rc, enq, err := e.s.CreateRun(e.ctx, core.RunSpec{Name: "p"}, core.ItemSpec{Queue: "hist-a", MaxAttempts: 2}, core.ItemSpec{Queue: "hist-b"})
	if err != nil {
		e.t.Fatal(err)
	}
	o := e.owner(e.s)
	a := e.claimOne(e.s, o, "hist-a")
	if _, err := e.s.Fail(e.ctx, a, core.FailParams{Error: "first"}); err != nil {
		e.t.Fatal(err)
	}
	a = e.claimOne(e.at(24*time.Hour), o, "hist-a")
	if dead, err := e.s.Fail(e.ctx, a, core.FailParams{Error: "second"}); err != nil || !dead {
		e.t.Fatalf("Fail on the last attempt = %v, %v", dead, err)
	}
	e.wantHistory(a.ID, "1 failed first", "2 failed second")
	if _, err := e.s.ReviveRun(e.ctx, rc.ID); err != nil {
		e.t.Fatal(err)
	}
	a = e.claimOne(e.s, o, "hist-a")
	if _, err := e.s.Fail(e.ctx, a, core.FailParams{Error: "third", Discard: true}); err != nil {
		e.t.Fatal(err)
	}
	if err := e.s.Revive(e.ctx, a.ID); err != nil {
		e.t.Fatal(err)
	}
	e.wantHistory(a.ID, "1 failed first", "2 failed second", "3 failed third")

	// B fails once, runs again, and is cancelled with its run mid-attempt.
	b := e.claimOne(e.s, o, "hist-b")
	if _, err := e.s.Fail(e.ctx, b, core.FailParams{Error: "flaky"}); err != nil {
		e.t.Fatal(err)
	}
	b = e.claimOne(e.at(24*time.Hour), o, "hist-b")
	if _, err := e.s.CancelRun(e.ctx, rc.ID); err != nil {
		e.t.Fatal(err)
	}
	held, _ := e.s.Fence(e.ctx, b, func(context.Context, *core.Fenced) error { return nil })
	if held || e.get(enq[1].ID).State != core.StateCancelled {
		e.t.Fatalf("B after CancelRun: held %v, %s; want lost, cancelled", held, e.get(enq[1].ID).State)
	}
	e.wantHistory(b.ID, "1 failed flaky")
}
