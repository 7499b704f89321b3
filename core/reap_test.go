package core_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/sqlite"
)

// TestReap_ExtendAfterReadSavesClaim checks that a reaper releases an
// expired claim only if its lease is still expired when the reaper holds
// the row: an Extend that lands between the reaper's read of expired
// leases and its release keeps the claim. Without the Extend the same
// pass times the claim out, so the setup really reaps.
func TestReap_ExtendAfterReadSavesClaim(t *testing.T) {
	t.Parallel()
	for _, beat := range []bool{false, true} {
		name := "no extend"
		if beat {
			name = "extend after the read"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			b := setup(t, core.Options{})
			c := claimOne(t, b, "q") // a one-minute lease
			// The reaper works two minutes later, where the lease has
			// expired and the owner (StaleAfter 10 min) is alive.
			later, err := core.Open(ctx, b.db, b.f, core.Options{ClockOffset: 2 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			var beats atomic.Int64
			if beat {
				b.f.afterCommit = func(stmts []string) {
					for _, q := range stmts {
						if strings.Contains(q, "lease_expires_at <") && strings.Contains(q, "EXISTS") && beats.Add(1) == 1 {
							if err := later.Extend(ctx, c, time.Minute); err != nil {
								t.Errorf("extend: %v", err)
							}
						}
					}
				}
			}
			r, err := later.Reap(ctx, core.ReapParams{StaleAfter: 10 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			it, err := b.store.Get(ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if beat {
				if beats.Load() == 0 {
					t.Fatal("the reaper never read the expired leases")
				}
				if r.TimedOut != 0 || it.State != core.StateClaimed {
					t.Fatalf("Reap = %+v, item %s; want nothing timed out and the item still claimed: the extension after the read came in time", r, it.State)
				}
				if err := b.store.Complete(ctx, c, nil); err != nil {
					t.Fatalf("complete after the saved claim: %v", err)
				}
				return
			}
			if r.TimedOut != 1 || it.State != core.StateAvailable {
				t.Fatalf("Reap = %+v, item %s; want one timeout and the item available", r, it.State)
			}
		})
	}
}

// TestReap_ReclaimedAfterReadIsNotReleased checks that a reaper's release
// compares the claim token it read: between its read of orphaned claims
// and its release, another reaper releases the orphan and a live owner
// claims the item again. The first reaper must leave the new claim alone,
// and the crash must be counted once.
func TestReap_ReclaimedAfterReadIsNotReleased(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, core.Options{})
	c := claimOne(t, b, "q") // b.owner's claim; b.owner never heartbeats again
	// Both reapers work ten minutes later, where b.owner is stale.
	const later, stale = 10 * time.Minute, 5 * time.Minute
	first, err := core.Open(ctx, b.db, b.f, core.Options{ClockOffset: later})
	if err != nil {
		t.Fatal(err)
	}
	other, err := core.Open(ctx, b.db, sqlite.Dialect(), core.Options{ClockOffset: later})
	if err != nil {
		t.Fatal(err)
	}
	var reclaimed atomic.Pointer[core.Claim]
	b.f.afterCommit = func(stmts []string) {
		for _, q := range stmts {
			if !strings.Contains(q, "NOT EXISTS") || reclaimed.Load() != nil {
				continue
			}
			r, err := other.Reap(ctx, core.ReapParams{StaleAfter: stale})
			if err != nil || r.Crashed != 1 {
				t.Errorf("the other reaper: %+v, %v; want one crash released", r, err)
				return
			}
			owner, err := other.RegisterOwner(ctx, core.RegisterOwnerParams{})
			if err != nil {
				t.Error(err)
				return
			}
			cs, err := other.Claim(ctx, core.ClaimParams{Queue: "q", Owner: owner, Limit: 1, Lease: time.Minute})
			if err != nil || len(cs) != 1 || cs[0].ID != c.ID {
				t.Errorf("claim again: %v, %d claims", err, len(cs))
				return
			}
			reclaimed.Store(&cs[0])
		}
	}
	r, err := first.Reap(ctx, core.ReapParams{StaleAfter: stale})
	if err != nil {
		t.Fatal(err)
	}
	again := reclaimed.Load()
	if again == nil {
		t.Fatal("the item was not claimed again between the reaper's read and its release")
	}
	it, err := b.store.Get(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Crashed != 0 || it.State != core.StateClaimed || it.CrashCount != 1 {
		t.Fatalf("stale reaper: %+v; item %s with %d crashes; want nothing released, the new claim held, one crash", r, it.State, it.CrashCount)
	}
	if err := other.Complete(ctx, *again, nil); err != nil {
		t.Fatalf("the new owner's completion: %v", err)
	}
}
