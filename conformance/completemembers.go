package conformance

import (
	"slices"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// CompleteMany counts each barrier member's arrival by the member's row,
// not by what the claim handed in says: a claim whose BarrierID is zero
// (built by hand, or stale) still counts at the item's barrier. A batch
// mixing items of no barrier, a barrier's member and a lost claim
// completes each held item once and reports exactly the lost one; the
// same batch again changes nothing and reports the same.
func testCompleteCountsByTheRow(e *env) {
	const queue, kidsQ, plain = "by-row", "by-row-kids", "by-row-plain"
	e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	parent := e.claimOne(e.s, e.owner(e.s), queue)
	bar := e.fanOut(e.s, parent, core.BarrierSpec{Name: "by-row", Join: core.JoinSpec{Queue: "by-row-join"}}, kids(kidsQ, "k", 2))
	e.enqueue(e.s, core.ItemSpec{Queue: plain}, core.ItemSpec{Queue: plain}, core.ItemSpec{Queue: plain})
	o := e.owner(e.s)
	members := e.claimAll(e.s, o, kidsQ, 2)
	others := e.claimAll(e.s, o, plain, 3)
	lostID := others[2].ID
	if err := e.s.Cancel(e.ctx, lostID); err != nil {
		e.t.Fatalf("Cancel: %v", err)
	}

	// One member alone, its claim saying it belongs to no barrier.
	blind := members[0]
	blind.BarrierID = uuid.Nil
	if err := e.s.Complete(e.ctx, blind, nil); err != nil {
		e.t.Fatalf("Complete of a member whose claim names no barrier: %v", err)
	}
	if b := e.barrier(bar.ID); b.Arrived != 1 || b.Fired() {
		e.t.Fatalf("after one member: arrived %d, fired %v; want 1, not fired", b.Arrived, b.Fired())
	}

	// The other member, with the items of no barrier and a lost claim.
	batch := []core.Completion{{Claim: others[0]}, {Claim: others[1]}, {Claim: others[2]}, {Claim: members[1]}}
	for round := range 2 {
		lost, err := e.s.CompleteMany(e.ctx, batch)
		if err != nil {
			e.t.Fatalf("CompleteMany (round %d): %v", round+1, err)
		}
		if !slices.Equal(lost, []uuid.UUID{lostID}) {
			e.t.Errorf("CompleteMany (round %d) lost %v, want only %s", round+1, lost, lostID)
		}
		b := e.barrier(bar.ID)
		if b.Arrived != 2 || !b.Fired() || e.joinsOf(bar.ID) != 1 {
			e.t.Errorf("round %d: arrived %d, fired %v, %d joins; want 2, fired, one join", round+1, b.Arrived, b.Fired(), e.joinsOf(bar.ID))
		}
	}
	for _, c := range append(others[:2:2], members...) {
		if it := e.get(c.ID); it.State != core.StateCompleted {
			e.t.Errorf("item %s is %s, want completed", c.ID, it.State)
		}
	}
	if it := e.get(lostID); it.State != core.StateCancelled {
		e.t.Errorf("lost item is %s, want cancelled still", it.State)
	}
}
