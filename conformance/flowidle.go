package conformance

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/fault"
)

// A claim that finds a lane without available work sets it idle, its
// items held by claims or not, so that later claims pass it by until new
// work wakes it; an item handed back by its holder is such work. Here the
// holder fails its item back just as another claim, which found the lane
// without work, is about to set the lane idle: the hand-back waits for
// that claim's lock on the lane and wakes it after, and a later claim
// finds the item. Without the hand-back's wake, or with one that does not
// wait for the lane's lock, the lane stayed idle with the item in it.
func testFlowHandBackDuringIdle(e *env) {
	const queue = "flow-idle"
	e.byLanes(queue, "k")
	id := e.enqueueOne(e.s, core.ItemSpec{Queue: queue, FlowKey: "k"})
	holder := e.claimOne(e.s, e.owner(e.s), queue)
	if holder.ID != id {
		e.t.Fatalf("claimed %s, want %s", holder.ID, id)
	}

	// The hand-back runs in a transaction of its own, beside the claim's,
	// which holds the lane's lock: it is started, not waited for, and
	// finishes once the claim has committed, or before it where nothing
	// makes it wait (the defect this test is for).
	handedBack := make(chan error, 1)
	started := false
	ctx := fault.With(e.ctx, fault.LaneIdleAfterRead, fault.Rule{Action: fault.Call, Times: 1, Func: func(context.Context) error {
		started = true
		go func() {
			dead, err := e.s.Fail(e.ctx, holder, core.FailParams{Error: "handed back", RetryIn: time.Microsecond})
			if err == nil && dead {
				err = fmt.Errorf("the item died, want it retried")
			}
			handedBack <- err
		}()
		return nil
	}})
	other := e.owner(e.s)
	cs, err := e.s.Claim(ctx, core.ClaimParams{Queue: queue, Owner: other, Limit: 5, Lease: time.Hour})
	if err != nil || len(cs) != 0 {
		e.t.Fatalf("the claim that found the lane without work claimed = %v, %v; want nothing", cs, err)
	}
	if !started {
		e.t.Fatal("the claim did not set the lane idle: the scenario did not happen")
	}
	if err := <-handedBack; err != nil {
		e.t.Fatalf("Fail beside the claim: %v", err)
	}

	// The item is available a microsecond after the hand-back, on the
	// database clock: a claim a minute later finds it, through its lane.
	if cs := e.claim(e.at(time.Minute), other, queue, 5); len(cs) != 1 || cs[0].ID != id {
		e.t.Fatalf("after the hand-back claimed %v, want the item handed back: its lane was left idle with it", cs)
	}
}

// Every way a claimed keyed item goes back to available wakes its lane,
// which a claim set idle while the item was claimed: a failure to retry,
// a release, a parked Await (its deadline passes), a clean stop of its
// owner (Deregister), and the reaper, for a crashed owner and for an
// expired lease. Each case checks that the lane had no turn while its
// only item was claimed, and that a claim finds the item once it is due.
func testFlowHandBackWakesIdleLane(e *env) {
	cases := []struct {
		name string
		// back hands c back; due is how long after it a claim finds it.
		back func(c core.Claim)
		due  time.Duration
	}{
		{"fail", func(c core.Claim) {
			if dead, err := e.s.Fail(e.ctx, c, core.FailParams{Error: "again", RetryIn: time.Second}); err != nil || dead {
				e.t.Fatalf("Fail = %v, %v; want retried", dead, err)
			}
		}, time.Minute},
		{"release", func(c core.Claim) {
			if err := e.s.Release(e.ctx, c, 0); err != nil {
				e.t.Fatalf("Release: %v", err)
			}
		}, 0},
		{"await", func(c core.Claim) {
			if r := e.await(e.s, c, core.AwaitParams{Name: "go", Timeout: time.Second}); !r.Waiting {
				e.t.Fatalf("Await = %+v, want waiting", r)
			}
		}, time.Minute},
		{"deregister", func(c core.Claim) {
			if err := e.s.Deregister(e.ctx, c.Owner); err != nil {
				e.t.Fatalf("Deregister: %v", err)
			}
		}, 0},
		{"reaper, owner gone", func(c core.Claim) {
			// The owner's heartbeat is stale an hour on: the reaper
			// removes it and hands its claim back.
			if r, err := e.at(time.Hour).Reap(e.ctx, core.ReapParams{StaleAfter: 30 * time.Minute}); err != nil || r.Crashed != 1 {
				e.t.Fatalf("Reap = %+v, %v; want one crash", r, err)
			}
		}, time.Hour},
		{"reaper, lease expired", func(c core.Claim) {
			// The lease (a minute) has expired ten minutes on; the owner
			// is alive by a heartbeat on that clock.
			later := e.at(10 * time.Minute)
			if err := later.Heartbeat(e.ctx, c.Owner); err != nil {
				e.t.Fatalf("Heartbeat: %v", err)
			}
			if r, err := later.Reap(e.ctx, core.ReapParams{StaleAfter: 30 * time.Minute}); err != nil || r.TimedOut != 1 {
				e.t.Fatalf("Reap = %+v, %v; want one timeout", r, err)
			}
		}, time.Hour},
	}
	for i, c := range cases {
		queue := fmt.Sprintf("flow-back-%d", i)
		e.byLanes(queue, "k")
		id := e.keyedItem(core.ItemSpec{Queue: queue, FlowKey: "k", MaxAttempts: 5}, c.name == "await")
		holder := e.owner(e.s)
		cs := e.claimLease(e.s, holder, queue, 1, time.Minute)
		if len(cs) != 1 || cs[0].ID != id {
			e.t.Fatalf("%s: claimed %v, want the item", c.name, cs)
		}
		// A claim that finds the lane without work sets it idle, though
		// its item is claimed.
		if got := e.claim(e.s, e.owner(e.s), queue, 5); len(got) != 0 {
			e.t.Fatalf("%s: claimed %d of a lane whose item is held", c.name, len(got))
		}
		if at := e.laneTurn(queue, "k"); !at.IsZero() {
			e.t.Fatalf("%s: the lane's turn is %v with its only item claimed, want none (idle)", c.name, at)
		}
		c.back(cs[0])
		at := e.laneTurn(queue, "k")
		if at.IsZero() {
			e.t.Fatalf("%s: the lane has no turn after its item was handed back", c.name)
		}
		// The turn is the item's time, where its claim handed it back to:
		// not earlier, which would cost a claim a look for nothing.
		if due := e.get(id).AvailableAt; at.Before(due.Add(-e.clockSlack())) {
			e.t.Errorf("%s: the lane's turn is %v, before its item's time %v", c.name, at, due)
		}
		later := e.at(c.due)
		got := e.claim(later, e.owner(later), queue, 5)
		if len(got) != 1 || got[0].ID != id {
			e.t.Fatalf("%s: claimed %v %v on, want the item handed back", c.name, got, c.due)
		}
		// Done, so that the reaper's cases find only their own claim.
		e.complete(later, got[0], "")
	}
}

// keyedItem enqueues spec, in a run of its own where the item's handler
// awaits a signal (Await needs the item's run), and returns its id.
func (e *env) keyedItem(spec core.ItemSpec, inRun bool) uuid.UUID {
	e.t.Helper()
	if !inRun {
		return e.enqueueOne(e.s, spec)
	}
	_, items, err := e.s.CreateRun(e.ctx, core.RunSpec{Name: "flow-await"}, spec)
	if err != nil || len(items) != 1 {
		e.t.Fatalf("CreateRun = %v, %v; want one item", items, err)
	}
	return items[0].ID
}

// laneTurn is the turn of key's lane in queue (browse.Lane.NextAt): zero
// when it has none.
func (e *env) laneTurn(queue, key string) time.Time {
	e.t.Helper()
	page, err := e.reader().Lanes(e.ctx, browse.LanesParams{Queue: queue, Limit: browse.MaxListLimit})
	if err != nil {
		e.t.Fatalf("Lanes(%s): %v", queue, err)
	}
	for _, l := range page.Lanes {
		if l.Key == key {
			return l.NextAt
		}
	}
	e.t.Fatalf("queue %s has no lane %q", queue, key)
	return time.Time{}
}

// Lanes whose items are all held by claims take no place in a claim:
// with 300 keys each holding one claimed item and one key with a backlog,
// claims of 100 take the backlog's items, 100 at a time. When a lane kept
// its turn while it held a claimed item, every claim took the held lanes
// too, each giving nothing, and the backlog's key gave one or two items a
// claim.
func testFlowHeldLanesDoNotCrowdOutWork(e *env) {
	// Claimed lane by lane (a limit that does not bind), and key by key.
	e.heldDoNotCrowdOut("flow-held", true)
	e.heldDoNotCrowdOut("flow-held-keys", false)
}

func (e *env) heldDoNotCrowdOut(queue string, lanes bool) {
	keys := e.scaled(300, 120)
	specs := make([]core.ItemSpec, keys)
	for k := range specs {
		specs[k] = core.ItemSpec{Queue: queue, FlowKey: fmt.Sprint("held-", k)}
		if lanes {
			e.byLanes(queue, specs[k].FlowKey)
		}
	}
	if lanes {
		e.byLanes(queue, "backlog")
	}
	e.enqueue(e.s, specs...)
	holder := e.owner(e.s)
	for held := 0; held < keys; {
		cs := e.claim(e.s, holder, queue, 100)
		if len(cs) == 0 {
			e.t.Fatalf("%s: claimed %d of the %d held keys' items, then nothing", queue, held, keys)
		}
		held += len(cs)
	}
	backlog := make([]core.ItemSpec, 300)
	for i := range backlog {
		backlog[i] = core.ItemSpec{Queue: queue, FlowKey: "backlog"}
	}
	e.enqueue(e.s, backlog...)
	// The first claims may still meet held lanes that have not yet been
	// found without work; within three, each must take a full claim.
	worker := e.owner(e.s)
	var sizes []int
	for claims := 0; claims < 6; claims++ {
		cs := e.claim(e.s, worker, queue, 100)
		sizes = append(sizes, len(cs))
		if len(cs) == 100 {
			if cs := e.claim(e.s, worker, queue, 100); len(cs) != 100 {
				e.t.Fatalf("%s: claims of 100 took %v then %d: the held lanes took places again", queue, sizes, len(cs))
			}
			return
		}
	}
	e.t.Fatalf("%s: six claims of 100 took %v of the backlog's 300 items: lanes whose items are all held crowd out the one with work", queue, sizes)
}

// Deregister counts its owner's claims by lane before it hands them
// back: a claim of the owner's own that commits in between (a worker
// still claiming as it stops) is handed back too, and its lane, which
// that claim set idle on taking its only item, must be woken with it.
// Deregister finds the count short and runs again; a Deregister that
// woke only the lanes it counted left the item without a turn.
func testFlowDeregisterWhileClaiming(e *env) {
	if e.caps.SingleWriter {
		e.t.Skipf("dialect %s runs one write transaction at a time (Capabilities.SingleWriter): no claim can commit inside Deregister's transaction", e.d.Name())
	}
	const queue = "flow-deregister"
	e.byLanes(queue, "first", "late")
	owner := e.owner(e.s)
	first := e.enqueueOne(e.s, core.ItemSpec{Queue: queue, FlowKey: "first"})
	if cs := e.claim(e.s, owner, queue, 1); len(cs) != 1 || cs[0].ID != first {
		e.t.Fatalf("claimed %v, want the first item", cs)
	}
	late := e.enqueueOne(e.s, core.ItemSpec{Queue: queue, FlowKey: "late"})
	claimed := 0
	ctx := fault.With(e.ctx, fault.DeregisterAfterCount, fault.Rule{Action: fault.Call, Times: 1, Func: func(context.Context) error {
		// Another transaction, of the same owner: it takes the late
		// item, asking for more, and sets its lane idle.
		cs, err := e.s.Claim(e.ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: 5, Lease: time.Hour})
		if err != nil {
			e.t.Errorf("Claim inside Deregister: %v", err)
		}
		claimed = len(cs)
		return nil
	}})
	if err := e.s.Deregister(ctx, owner); err != nil {
		e.t.Fatalf("Deregister: %v", err)
	}
	if claimed != 1 {
		e.t.Fatalf("the claim inside Deregister took %d items, want the late one: the scenario did not happen", claimed)
	}
	got := map[uuid.UUID]bool{}
	for _, c := range e.claim(e.s, e.owner(e.s), queue, 5) {
		got[c.ID] = true
	}
	if !got[first] || !got[late] || len(got) != 2 {
		e.t.Fatalf("after Deregister claimed %v, want both items handed back (first %s, late %s)", got, first, late)
	}
}

// byLanes has the claims of keys in queue take lanes, as they do where
// a limit applies: each key is given a concurrency limit of its own that
// never binds (the queue's default stays unbounded, so that a claim
// takes as many lanes as before). A key without a limit is claimed key
// by key, without its lane's row (Flow_KeysWithoutLimits*), and the
// tests of what lanes keep (their turns, idle and woken) are tests of
// claims that take them.
func (e *env) byLanes(queue string, keys ...string) {
	e.t.Helper()
	for _, k := range keys {
		if err := e.s.SetLimit(e.ctx, core.Limit{Queue: queue, Key: k, Concurrency: core.MaxLimitValue}); err != nil {
			e.t.Fatalf("SetLimit of %s's %s: %v", queue, k, err)
		}
	}
}
