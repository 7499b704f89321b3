package conformance

import (
	"context"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/fault"
)

// A claim that finds a lane without available work sets it idle, so
// that later claims pass it by until new work wakes it; a claimed item
// the lane's own holder hands back wakes nothing. So the claim must not
// set idle a lane whose item is handed back while it decides: here the
// item's holder fails it back between the claim's two reads of the lane
// (its claimed items, then its first available one), and a later claim
// must still find it. Read the other way round, or as one read before
// the hand-back, the lane went idle with the item in it, and no claim
// took it again.
func testFlowHandBackDuringIdle(e *env) {
	if e.caps.SingleWriter {
		e.t.Skipf("dialect %s runs one write transaction at a time (Capabilities.SingleWriter): no hand-back can commit inside a claim's transaction", e.d.Name())
	}
	const queue = "flow-idle"
	id := e.enqueueOne(e.s, core.ItemSpec{Queue: queue, FlowKey: "k"})
	holder := e.claimOne(e.s, e.owner(e.s), queue)
	if holder.ID != id {
		e.t.Fatalf("claimed %s, want %s", holder.ID, id)
	}

	handedBack := false
	ctx := fault.With(e.ctx, fault.LaneIdleBetweenReads, fault.Rule{Action: fault.Call, Times: 1, Func: func(context.Context) error {
		// Another transaction: the claim's own holds the lane's lock,
		// which a hand-back does not take.
		if dead, err := e.s.Fail(e.ctx, holder, core.FailParams{Error: "handed back", RetryIn: time.Microsecond}); err != nil || dead {
			e.t.Errorf("Fail inside the claim = %v, %v; want retried", dead, err)
		}
		handedBack = true
		return nil
	}})
	other := e.owner(e.s)
	cs, err := e.s.Claim(ctx, core.ClaimParams{Queue: queue, Owner: other, Limit: 5, Lease: time.Hour})
	if err != nil || len(cs) != 0 {
		e.t.Fatalf("the claim that found the lane's item claimed = %v, %v; want nothing", cs, err)
	}
	if !handedBack {
		e.t.Fatal("the claim did not consider setting the lane idle: the scenario did not happen")
	}

	// The item is available a microsecond after the hand-back, on the
	// database clock: a claim a minute later finds it, through its lane.
	if cs := e.claim(e.at(time.Minute), other, queue, 5); len(cs) != 1 || cs[0].ID != id {
		e.t.Fatalf("after the hand-back claimed %v, want the item handed back: its lane was set idle with it", cs)
	}
}
