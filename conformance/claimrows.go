package conformance

import (
	"time"

	"github.com/plenumdb/plenum/core"
)

// A claim returns its items as the claim left them in the database:
// state, token, owner, one attempt more, the attempts lowered to their
// kind's limit, the claim's time and the lease after it, and what the
// claim did not change. Checked for the queue's claim and for the claim
// of keyed items (lane by lane, with a concurrency limit and a rate that
// do not bind), each read back with Get.
func testClaimReturnsTheRowsAsStored(e *env) {
	const plain, keyed = "rows-plain", "rows-keyed"
	const lease = 90*time.Second + 1234567*time.Nanosecond
	limits := map[string]int{"capped": 2}
	var specs []core.ItemSpec
	for _, q := range []string{plain, keyed} {
		key := ""
		if q == keyed {
			key = "tenant"
		}
		specs = append(specs,
			core.ItemSpec{Queue: q, Kind: "capped", MaxAttempts: 5, Priority: 1, Payload: []byte(`{"a":1}`), FlowKey: key},
			core.ItemSpec{Queue: q, Kind: "capped", MaxAttempts: 1, Priority: 2, FlowKey: key},
			core.ItemSpec{Queue: q, Kind: "free", MaxAttempts: 7, Priority: 3, FlowKey: key},
		)
		if key != "" {
			specs[len(specs)-1].Cost = 2
		}
	}
	e.enqueue(e.s, specs...)
	if err := e.s.SetLimit(e.ctx, core.Limit{Queue: keyed, Key: "tenant", Concurrency: 10, Rate: 1000, Per: time.Second, Burst: 100}); err != nil {
		e.t.Fatalf("SetLimit: %v", err)
	}
	o := e.owner(e.s)
	for _, q := range []string{plain, keyed} {
		cs, err := e.s.Claim(e.ctx, core.ClaimParams{Queue: q, Owner: o, Limit: 10, Lease: lease, MaxAttempts: limits})
		if err != nil {
			e.t.Fatalf("Claim(%s): %v", q, err)
		}
		if len(cs) != 3 {
			e.t.Fatalf("Claim(%s) took %d items, want 3", q, len(cs))
		}
		for _, c := range cs {
			got, stored := c.Item, e.get(c.ID)
			// Each spec has its own priority: 5 attempts lowered to the
			// kind's 2, 1 kept (below the limit), 7 of a kind without one.
			want := map[int]int{1: 2, 2: 1, 3: 7}[got.Priority]
			if got.State != core.StateClaimed || got.ClaimToken != c.Token || got.ClaimedBy != o || got.Attempt != 1 || got.MaxAttempts != want {
				e.t.Errorf("%s: claim of %s: state %s, token %s, owner %s, attempt %d, max attempts %d; want claimed, %s, %s, 1, %d",
					q, got.Kind, got.State, got.ClaimToken, got.ClaimedBy, got.Attempt, got.MaxAttempts, c.Token, o, want)
			}
			if !got.LeaseExpiresAt.Equal(got.ClaimedAt.Add(lease.Truncate(time.Microsecond))) {
				e.t.Errorf("%s: claimed at %v, lease to %v: not %v apart", q, got.ClaimedAt, got.LeaseExpiresAt, lease.Truncate(time.Microsecond))
			}
			same := got.State == stored.State && got.ClaimToken == stored.ClaimToken && got.ClaimedBy == stored.ClaimedBy &&
				got.Attempt == stored.Attempt && got.MaxAttempts == stored.MaxAttempts && got.CrashCount == stored.CrashCount &&
				got.ClaimedAt.Equal(stored.ClaimedAt) && got.LeaseExpiresAt.Equal(stored.LeaseExpiresAt) &&
				got.AvailableAt.Equal(stored.AvailableAt) && got.CreatedAt.Equal(stored.CreatedAt) &&
				got.Kind == stored.Kind && got.Queue == stored.Queue && got.Priority == stored.Priority &&
				string(got.Payload) == string(stored.Payload) && got.FlowKey == stored.FlowKey && got.Cost == stored.Cost
			if !same {
				e.t.Errorf("%s: the claim returned\n\t%+v\nthe database holds\n\t%+v", q, got, stored)
			}
		}
	}
}
