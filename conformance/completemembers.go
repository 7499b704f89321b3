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

// Where every claim of a batch names one barrier, CompleteMany may
// complete them in one update fenced on that barrier too; what the
// claims say is still not trusted. A member whose claim names another
// barrier counts at its own, an item of no barrier whose claim names one
// counts nowhere, a batch with a lost member counts the others once and
// reports the lost one, and each batch again changes nothing and counts
// nothing.
func testCompleteMembersByTheRow(e *env) {
	const queue, kidsQ = "members-row", "members-row-kids"
	e.enqueue(e.s, core.ItemSpec{Queue: queue}, core.ItemSpec{Queue: queue})
	o := e.owner(e.s)
	parents := e.claimAll(e.s, o, queue, 2)
	barA := e.fanOut(e.s, parents[0], core.BarrierSpec{Name: "a", Join: core.JoinSpec{Queue: "members-row-join"}}, kids(kidsQ, "a", 3))
	barB := e.fanOut(e.s, parents[1], core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "members-row-join"}}, kids(kidsQ, "b", 2))
	plainID := e.enqueueOne(e.s, core.ItemSpec{Queue: kidsQ})
	// One claim, one token, for the members of both barriers and the
	// item of none.
	all := e.claimAll(e.s, o, kidsQ, 6)
	var a, b []core.Claim
	var plain core.Claim
	for _, c := range all {
		switch c.BarrierID {
		case barA.ID:
			a = append(a, c)
		case barB.ID:
			b = append(b, c)
		default:
			plain = c
		}
	}
	if len(a) != 3 || len(b) != 2 || plain.ID != plainID {
		e.t.Fatalf("claimed %d of barrier a, %d of b, plain %s; want 3, 2, %s", len(a), len(b), plain.ID, plainID)
	}
	counts := func(step string, wantA, wantB int64) {
		e.t.Helper()
		if got := e.barrier(barA.ID).Arrived; got != wantA {
			e.t.Errorf("%s: barrier a arrived %d, want %d", step, got, wantA)
		}
		if got := e.barrier(barB.ID).Arrived; got != wantB {
			e.t.Errorf("%s: barrier b arrived %d, want %d", step, got, wantB)
		}
	}
	complete := func(step string, batch []core.Completion, wantLost ...uuid.UUID) {
		e.t.Helper()
		lost, err := e.s.CompleteMany(e.ctx, batch)
		if err != nil {
			e.t.Fatalf("%s: CompleteMany: %v", step, err)
		}
		if !slices.Equal(lost, wantLost) {
			e.t.Errorf("%s: lost %v, want %v", step, lost, wantLost)
		}
	}

	// A member of b whose claim names a: both claims name a.
	stale := b[0]
	stale.BarrierID = barA.ID
	mixed := []core.Completion{{Claim: a[0]}, {Claim: stale}}
	complete("a member of b named a", mixed)
	counts("a member of b named a", 1, 1)

	// The item of no barrier, its claim naming a.
	named := plain
	named.BarrierID = barA.ID
	complete("an item of no barrier named a", []core.Completion{{Claim: named}})
	counts("an item of no barrier named a", 1, 1)

	// Two members of a, one of them lost (cancelled, which counts it
	// failed at a).
	if err := e.s.Cancel(e.ctx, a[2].ID); err != nil {
		e.t.Fatalf("Cancel: %v", err)
	}
	withLost := []core.Completion{{Claim: a[1]}, {Claim: a[2]}}
	complete("a member lost", withLost, a[2].ID)
	counts("a member lost", 2, 1)

	// Each batch again: done already, nothing counted twice.
	complete("again: a member of b named a", mixed)
	complete("again: an item of no barrier named a", []core.Completion{{Claim: named}})
	complete("again: a member lost", withLost, a[2].ID)
	counts("each batch again", 2, 1)
	if f := e.barrier(barA.ID).Failed; f != 1 {
		e.t.Errorf("barrier a failed %d, want 1 (the cancelled member)", f)
	}

	complete("the last member of b", []core.Completion{{Claim: b[1]}})
	counts("the last member of b", 2, 2)
	if !e.barrier(barB.ID).Fired() || e.joinsOf(barB.ID) != 1 {
		e.t.Errorf("barrier b: fired %v, %d joins; want fired, one join", e.barrier(barB.ID).Fired(), e.joinsOf(barB.ID))
	}
	for _, c := range []core.Claim{a[0], a[1], b[0], b[1], plain} {
		if it := e.get(c.ID); it.State != core.StateCompleted {
			e.t.Errorf("item %s is %s, want completed", c.ID, it.State)
		}
	}
}
