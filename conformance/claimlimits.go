package conformance

import (
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// A claim with attempt limits (ClaimParams.MaxAttempts) lowers the stored
// MaxAttempts of each item it takes of a listed kind to the kind's limit
// where the stored one is higher, in the claim itself: the claims it
// returns and Get show the lowered limit. It leaves a lower stored limit,
// the items of unlisted kinds and the items it does not take as they
// were.
func testClaimKindLimits(e *env) {
	const queue = "limits"
	higher := e.enqueueOne(e.s, core.ItemSpec{Queue: queue, Kind: "a"})
	lower := e.enqueueOne(e.s, core.ItemSpec{Queue: queue, Kind: "a", MaxAttempts: 2})
	other := e.enqueueOne(e.s, core.ItemSpec{Queue: queue, Kind: "b", MaxAttempts: 9})
	unlisted := e.enqueueOne(e.s, core.ItemSpec{Queue: queue, Kind: "c", MaxAttempts: 9})
	untaken := e.enqueueOne(e.s, core.ItemSpec{Queue: "limits-elsewhere", Kind: "a", MaxAttempts: 9})
	want := map[uuid.UUID]int{higher: 5, lower: 2, other: 7, unlisted: 9}

	cs, err := e.s.Claim(e.ctx, core.ClaimParams{
		Queue: queue, Owner: e.owner(e.s), Limit: 10, Lease: time.Hour,
		MaxAttempts: map[string]int{"a": 5, "b": 7, "d": 1},
	})
	if err != nil {
		e.t.Fatalf("Claim with kind limits: %v", err)
	}
	if len(cs) != len(want) {
		e.t.Fatalf("claimed %d items, want %d", len(cs), len(want))
	}
	for _, c := range cs {
		if c.MaxAttempts != want[c.ID] {
			e.t.Errorf("claim of kind %q returned MaxAttempts %d, want %d", c.Kind, c.MaxAttempts, want[c.ID])
		}
		if got := e.get(c.ID).MaxAttempts; got != want[c.ID] {
			e.t.Errorf("Get of a claimed item of kind %q: MaxAttempts %d, want %d", c.Kind, got, want[c.ID])
		}
	}
	if got := e.get(untaken).MaxAttempts; got != 9 {
		e.t.Errorf("Get of an item the claim did not take: MaxAttempts %d, want 9", got)
	}
}
