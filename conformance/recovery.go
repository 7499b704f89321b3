package conformance

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// Guarantee 3: the claims of an owner that stops heartbeating are released
// by a reaper as a crash (not an attempt), another owner finishes the item,
// and the reaped owner learns that it was reaped.
func testRecoveryOwnerStops(e *env) {
	const queue = "orphan"
	id := e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	a := e.owner(e.s)
	ca := e.claimOne(e.s, a, queue)
	if ca.Attempt != 1 || ca.CrashCount != 0 {
		e.t.Fatalf("claimed item: attempt %d, crashes %d; want 1, 0", ca.Attempt, ca.CrashCount)
	}

	// Ten minutes later, with no heartbeat from A: its lease (an hour)
	// still runs, but it is stale after five minutes.
	later := e.at(10 * time.Minute)
	r, err := later.Reap(e.ctx, core.ReapParams{StaleAfter: 5 * time.Minute})
	if err != nil {
		e.t.Fatalf("Reap: %v", err)
	}
	if r != (core.ReapResult{OwnersRemoved: 1, Crashed: 1}) {
		e.t.Fatalf("Reap = %+v, want one owner removed and one crash", r)
	}
	it := e.get(id)
	if it.State != core.StateAvailable || it.CrashCount != 1 || it.Attempt != 0 {
		e.t.Errorf("reaped item: %s, crashes %d, attempt %d; want available, 1 crash, attempt back to 0", it.State, it.CrashCount, it.Attempt)
	}
	if r, err := later.Reap(e.ctx, core.ReapParams{StaleAfter: 5 * time.Minute}); err != nil || r != (core.ReapResult{}) {
		e.t.Errorf("second Reap = %+v, %v; want nothing to do", r, err)
	}

	b := e.owner(later)
	cb := e.claimOne(later, b, queue)
	if cb.ID != id || cb.Attempt != 1 || cb.CrashCount != 1 {
		e.t.Errorf("B's claim: %s, attempt %d, crashes %d; want %s, attempt 1, 1 crash", cb.ID, cb.Attempt, cb.CrashCount, id)
	}
	e.complete(later, cb, `{"by":"b"}`)
	if it := e.get(id); it.State != core.StateCompleted || it.ClaimToken != cb.Token {
		e.t.Errorf("item after B's Complete: %s with token %s, want completed with %s", it.State, it.ClaimToken, cb.Token)
	}

	// A wakes up.
	if err := e.s.Heartbeat(e.ctx, a); !errors.Is(err, core.ErrOwnerLost) {
		e.t.Errorf("reaped owner's Heartbeat = %v, want ErrOwnerLost", err)
	}
	e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	if cs, err := e.s.Claim(e.ctx, core.ClaimParams{Queue: queue, Owner: a, Limit: 5, Lease: time.Minute}); !errors.Is(err, core.ErrOwnerLost) || len(cs) != 0 {
		e.t.Errorf("reaped owner's Claim = %d items, %v; want ErrOwnerLost", len(cs), err)
	}
	e.wantCounts(queue, map[core.State]int64{core.StateCompleted: 1, core.StateAvailable: 1})
}

// Guarantee 3: an item whose owners die MaxCrashes times while holding it
// is dead-lettered, and counts as a failed arrival at its barrier.
func testRecoveryPoison(e *env) {
	const queue, kidsQ = "poison-parent", "poison"
	const maxCrashes = 3
	e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	b := e.fanOut(e.s, e.claimOne(e.s, e.owner(e.s), queue), core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "poison-join"}},
		[]core.ChildSpec{{Key: "poison", Queue: kidsQ}, {Key: "fine", Queue: "fine"}})
	e.complete(e.s, e.claimOne(e.s, e.owner(e.s), "fine"), "")

	var id uuid.UUID
	for round := 1; round <= maxCrashes; round++ {
		// Each round on a later clock: the worker claims, then dies; ten
		// minutes later the reaper runs.
		worker := e.at(time.Duration(2*round-1) * 10 * time.Minute)
		reaper := e.at(time.Duration(2*round) * 10 * time.Minute)
		c := e.claimOne(worker, e.owner(worker), kidsQ)
		if id == uuid.Nil {
			id = c.ID
		}
		r, err := reaper.Reap(e.ctx, core.ReapParams{StaleAfter: 5 * time.Minute, MaxCrashes: maxCrashes})
		if err != nil {
			e.t.Fatalf("round %d: Reap: %v", round, err)
		}
		it := e.get(id)
		if round < maxCrashes {
			if r.Crashed != 1 || r.DeadLettered != 0 || it.State != core.StateAvailable || it.CrashCount != round {
				e.t.Fatalf("round %d: Reap %+v, item %s with %d crashes; want 1 crash released, available with %d crashes", round, r, it.State, it.CrashCount, round)
			}
			if got := e.barrier(b.ID); got.Failed != 0 || got.Fired() {
				e.t.Fatalf("round %d: barrier failed %d, fired %v; want 0, not fired", round, got.Failed, got.Fired())
			}
			continue
		}
		if r.Crashed != 1 || r.DeadLettered != 1 || it.State != core.StateDead || it.CrashCount != maxCrashes {
			e.t.Fatalf("last round: Reap %+v, item %s with %d crashes; want 1 crash dead-lettered, dead with %d crashes", r, it.State, it.CrashCount, maxCrashes)
		}
	}
	got := e.barrier(b.ID)
	if got.Arrived != 1 || got.Failed != 1 || !got.Fired() {
		e.t.Errorf("barrier: arrived %d, failed %d, fired %v; want 1, 1, fired", got.Arrived, got.Failed, got.Fired())
	}
	if n := e.joinsOf(b.ID); n != 1 {
		e.t.Errorf("%d join items, want 1", n)
	}
}

// Guarantee 3: a lease that expires while its owner is alive is a timeout:
// the attempt counts, no crash does, and on the last attempt the item is
// dead (a failed arrival at its barrier).
func testRecoveryTimeout(e *env) {
	const queue, kidsQ = "timeout-parent", "timeout"
	// The owner's last heartbeat is at +10 min; its claim, taken now, has a
	// one-minute lease.
	t10, t20 := e.at(10*time.Minute), e.at(20*time.Minute)
	a := e.owner(t10)
	e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	b := e.fanOut(e.s, e.claimOne(e.s, a, queue), core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "timeout-join"}},
		[]core.ChildSpec{{Key: "slow", Queue: kidsQ, MaxAttempts: 2}})
	c := e.claimLease(e.s, a, kidsQ, 1, time.Minute)
	if len(c) != 1 {
		e.t.Fatalf("claimed %d items, want 1", len(c))
	}
	id := c[0].ID
	r, err := t10.Reap(e.ctx, core.ReapParams{StaleAfter: 5 * time.Minute})
	if err != nil {
		e.t.Fatalf("Reap: %v", err)
	}
	if r != (core.ReapResult{TimedOut: 1}) {
		e.t.Fatalf("Reap = %+v, want one timeout and nothing else (the owner is alive)", r)
	}
	it := e.get(id)
	if it.State != core.StateAvailable || it.Attempt != 1 || it.CrashCount != 0 {
		e.t.Fatalf("timed-out item: %s, attempt %d, crashes %d; want available, attempt 1 used, no crash", it.State, it.Attempt, it.CrashCount)
	}

	// A timeout is a failed attempt: it waits out the backoff (seconds for
	// a first attempt) before it can run again.
	if c = e.claimLease(t10, a, kidsQ, 1, time.Minute); len(c) != 0 {
		e.t.Fatalf("timed-out item claimed again at once, want it to wait out its backoff")
	}
	// Second and last attempt, on a +15 min clock; at +20 min the owner
	// is still fresh (10 < 15 minutes) but the lease is long gone.
	c = e.claimLease(e.at(15*time.Minute), a, kidsQ, 1, time.Minute)
	if len(c) != 1 || c[0].Attempt != 2 {
		e.t.Fatalf("second claim: %d items (attempt %v), want 1 at attempt 2", len(c), c)
	}
	r, err = t20.Reap(e.ctx, core.ReapParams{StaleAfter: 15 * time.Minute})
	if err != nil {
		e.t.Fatalf("Reap: %v", err)
	}
	if r != (core.ReapResult{TimedOut: 1, DeadLettered: 1}) {
		e.t.Fatalf("Reap on the last attempt = %+v, want one timeout, dead-lettered", r)
	}
	if it := e.get(id); it.State != core.StateDead || it.CrashCount != 0 || it.Attempt != 2 {
		e.t.Errorf("item after its last attempt timed out: %s, attempt %d, crashes %d; want dead, 2, 0", it.State, it.Attempt, it.CrashCount)
	}
	if got := e.barrier(b.ID); got.Failed != 1 || got.Arrived != 0 || !got.Fired() {
		e.t.Errorf("barrier: arrived %d, failed %d, fired %v; want 0, 1, fired", got.Arrived, got.Failed, got.Fired())
	}
	if err := t20.Heartbeat(e.ctx, a); err != nil {
		e.t.Errorf("the live owner's Heartbeat = %v, want nil: a timeout must not remove its owner", err)
	}
}

// Guarantee 3: reapers running at once release each orphaned claim once,
// and count each crash once.
func testRecoveryConcurrentReapers(e *env) {
	const queue = "reapers"
	const owners, perOwner, reapers = 4, 50, 8
	specs := make([]core.ItemSpec, owners*perOwner)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: queue}
	}
	e.enqueue(e.s, specs...)
	var claimed []core.Claim
	for range owners {
		cs := e.claim(e.s, e.owner(e.s), queue, perOwner)
		if len(cs) != perOwner {
			e.t.Fatalf("claimed %d, want %d", len(cs), perOwner)
		}
		claimed = append(claimed, cs...)
	}

	stores := make([]*core.Store, reapers)
	for i := range stores {
		stores[i] = e.at(time.Hour)
	}
	results := make([]core.ReapResult, reapers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range reapers {
		wg.Go(func() {
			<-start
			r, err := stores[i].Reap(e.ctx, core.ReapParams{StaleAfter: 30 * time.Minute})
			if err != nil {
				e.t.Errorf("reaper %d: %v", i, err)
			}
			results[i] = r
		})
	}
	close(start)
	wg.Wait()
	var sum core.ReapResult
	for _, r := range results {
		sum.OwnersRemoved += r.OwnersRemoved
		sum.Crashed += r.Crashed
		sum.TimedOut += r.TimedOut
		sum.DeadLettered += r.DeadLettered
	}
	if want := (core.ReapResult{OwnersRemoved: owners, Crashed: owners * perOwner}); sum != want {
		e.t.Errorf("%d concurrent reapers released %+v in all, want %+v (per reaper: %+v)", reapers, sum, want, results)
	}
	for _, c := range claimed {
		if it := e.get(c.ID); it.State != core.StateAvailable || it.CrashCount != 1 || it.Attempt != 0 {
			e.t.Errorf("item %s: %s, crashes %d, attempt %d; want available, 1 crash, attempt 0", c.ID, it.State, it.CrashCount, it.Attempt)
		}
	}
	if r, err := stores[0].Reap(e.ctx, core.ReapParams{StaleAfter: 30 * time.Minute}); err != nil || r != (core.ReapResult{}) {
		e.t.Errorf("Reap after the concurrent ones = %+v, %v; want nothing left", r, err)
	}

	// Above, removing the stale owners comes first in every pass, and on a
	// database with row locks that alone lines the reapers up. Here the
	// owners are already gone, so reapers working in small passes read the
	// same orphaned claims at once: only the compare-and-set on the claim
	// token keeps a crash from being counted twice.
	orphaned := orphanClaims(e, stores[0], "reapers-orphans", owners, perOwner)
	crashed := 1 + reapInSmallPasses(e, stores)
	if got := crashed; got != len(orphaned) {
		e.t.Errorf("reapers racing in small passes counted %d crashes, want %d: a claim was released twice", got, len(orphaned))
	}
	for _, c := range orphaned {
		if it := e.get(c.ID); it.State != core.StateAvailable || it.CrashCount != 1 {
			e.t.Errorf("item %s: %s, crashes %d; want available with 1 crash", c.ID, it.State, it.CrashCount)
		}
	}

	testReapersRaceClaimers(e, stores)

	// Every crash counted is one row of its item's history, and no more.
	if n := e.sqlCount("SELECT COUNT(*) FROM {attempts} WHERE outcome = 'crash'"); n < int64(2*owners*perOwner) {
		e.t.Errorf("%d crashes in the items' histories, want at least %d", n, 2*owners*perOwner)
	}
	if n := e.sqlCount("SELECT COUNT(*) FROM {items} i WHERE crash_count <> (SELECT COUNT(*) FROM {attempts} a WHERE a.item_id = i.id AND a.outcome = 'crash')"); n != 0 {
		e.t.Errorf("%d items whose crash count differs from the crashes in their history", n)
	}
}

// testReapersRaceClaimers races reapers working in small passes over
// orphaned claims against live owners that claim each released item again
// at once and complete it. A reaper's read can then be stale in the worst
// way: the item it read as orphaned is claimed again, by a live owner, in
// the same state. Only the claim token in the reaper's compare-and-set
// keeps it from releasing the live owner's new claim.
func testReapersRaceClaimers(e *env, stores []*core.Store) {
	const queue = "reapers-reclaimed"
	const owners, perOwner, claimers = 4, 50, 4
	orphaned := orphanClaims(e, stores[0], queue, owners, perOwner)
	var lost, completed atomic.Int64
	reapersDone := make(chan struct{})
	var claiming sync.WaitGroup
	for i := range claimers {
		// Live owners on the reapers' clock: their heartbeats are fresh
		// and their leases far from expiry there.
		s := stores[i%len(stores)]
		owner := e.owner(s)
		claiming.Go(func() {
			for {
				cs, err := s.Claim(e.ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: 5, Lease: 10 * time.Minute})
				if err != nil {
					e.t.Errorf("claimer %d: %v", i, err)
					return
				}
				if len(cs) == 0 {
					select {
					case <-reapersDone:
						return
					case <-time.After(time.Millisecond):
						continue
					}
				}
				for _, c := range cs {
					switch err := s.Complete(e.ctx, c, nil); {
					case errors.Is(err, core.ErrClaimLost):
						lost.Add(1)
					case err != nil:
						e.t.Errorf("claimer %d: Complete: %v", i, err)
						return
					default:
						completed.Add(1)
					}
				}
			}
		})
	}
	crashed := 1 + reapInSmallPasses(e, stores)
	close(reapersDone)
	claiming.Wait()
	if got := crashed; got != len(orphaned) || lost.Load() != 0 {
		e.t.Errorf("reapers racing live claimers counted %d crashes (want %d), and live owners lost %d claims (want 0): a reaper released a claim taken again after it read it", got, len(orphaned), lost.Load())
	}
	if got := completed.Load(); got != int64(len(orphaned)) {
		e.t.Errorf("live owners completed %d items, want %d", got, len(orphaned))
	}
	for _, c := range orphaned {
		if it := e.get(c.ID); it.State != core.StateCompleted || it.CrashCount != 1 {
			e.t.Errorf("item %s: %s, crashes %d; want completed with 1 crash", c.ID, it.State, it.CrashCount)
		}
	}
}

// Guarantee 3: an owner that shuts down cleanly gives its claims back at
// once, using neither an attempt nor a crash, and is gone: its heartbeat
// and claims get ErrOwnerLost, its old claims ErrClaimLost.
func testRecoveryDeregister(e *env) {
	const queue = "deregister"
	for range 3 {
		e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	}
	a := e.owner(e.s)
	held := e.claim(e.s, a, queue, 3)
	if len(held) != 3 {
		e.t.Fatalf("claimed %d, want 3", len(held))
	}
	if err := e.s.Deregister(e.ctx, a); err != nil {
		e.t.Fatalf("Deregister: %v", err)
	}
	for _, c := range held {
		it := e.get(c.ID)
		if it.State != core.StateAvailable || it.Attempt != 0 || it.CrashCount != 0 {
			e.t.Errorf("item %s after Deregister: %s, attempt %d, crashes %d; want available, 0, 0", c.ID, it.State, it.Attempt, it.CrashCount)
		}
		if err := e.s.Complete(e.ctx, c, nil); !errors.Is(err, core.ErrClaimLost) {
			e.t.Errorf("Complete with a claim given back = %v, want ErrClaimLost", err)
		}
	}
	if err := e.s.Heartbeat(e.ctx, a); !errors.Is(err, core.ErrOwnerLost) {
		e.t.Errorf("Heartbeat after Deregister = %v, want ErrOwnerLost", err)
	}
	if _, err := e.s.Claim(e.ctx, core.ClaimParams{Queue: queue, Owner: a, Limit: 1, Lease: time.Minute}); !errors.Is(err, core.ErrOwnerLost) {
		e.t.Errorf("Claim after Deregister = %v, want ErrOwnerLost", err)
	}
	// Available at once, to another owner.
	if got := e.claim(e.s, e.owner(e.s), queue, 3); len(got) != 3 {
		e.t.Errorf("another owner claimed %d, want the 3 given back", len(got))
	}
}

// reapInSmallPasses runs a reaper on each store in passes of 7 claims at
// once, until each pass finds nothing, then one more pass for what the
// racing reapers left (each stops after a pass that lost every race), and
// returns the crashes they counted in all.
func reapInSmallPasses(e *env, stores []*core.Store) int {
	var crashed atomic.Int64
	var wg sync.WaitGroup
	for i := range stores {
		wg.Go(func() {
			for {
				r, err := stores[i].Reap(e.ctx, core.ReapParams{StaleAfter: 30 * time.Minute, Limit: 7})
				if err != nil {
					e.t.Errorf("reaper %d: %v", i, err)
					return
				}
				crashed.Add(int64(r.Crashed))
				if r.Crashed == 0 {
					return
				}
			}
		})
	}
	wg.Wait()
	for {
		r, err := stores[0].Reap(e.ctx, core.ReapParams{StaleAfter: 30 * time.Minute})
		if err != nil {
			e.t.Fatalf("Reap: %v", err)
		}
		if r.Crashed == 0 {
			return int(crashed.Load())
		}
		crashed.Add(int64(r.Crashed))
	}
}

// orphanClaims enqueues owners*perOwner items on queue, has that many
// owners claim perOwner each and stop heartbeating, and runs one reaper
// pass of one claim through reaper, an hour ahead: it removes every owner
// and releases one claim, so that the claims left are orphaned with their
// owners already gone.
func orphanClaims(e *env, reaper *core.Store, queue string, owners, perOwner int) []core.Claim {
	specs := make([]core.ItemSpec, owners*perOwner)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: queue}
	}
	e.enqueue(e.s, specs...)
	var orphaned []core.Claim
	for range owners {
		orphaned = append(orphaned, e.claim(e.s, e.owner(e.s), queue, perOwner)...)
	}
	first, err := reaper.Reap(e.ctx, core.ReapParams{StaleAfter: 30 * time.Minute, Limit: 1})
	if err != nil || first.OwnersRemoved != owners || first.Crashed != 1 {
		e.t.Fatalf("first small pass = %+v, %v; want %d owners removed and 1 crash", first, err, owners)
	}
	return orphaned
}
