package conformance

import (
	"context"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/fault"
)

// laneItem enqueues spec as key's one item in queue, and claims it.
func (e *env) laneItem(queue, key string, spec core.ItemSpec) core.Claim {
	e.t.Helper()
	spec.Queue, spec.FlowKey = queue, key
	e.enqueueOne(e.s, spec)
	c := e.claimOne(e.s, e.owner(e.s), queue)
	if c.FlowKey != key {
		e.t.Fatalf("claimed an item of key %q, want %q", c.FlowKey, key)
	}
	return c
}

// setIdle has a claim of queue find its lanes without work, which sets
// them idle.
func (e *env) setIdle(queue string) {
	e.t.Helper()
	if cs := e.claim(e.s, e.owner(e.s), queue, 10); len(cs) != 0 {
		e.t.Fatalf("claimed %d of %s with no work due, want none", len(cs), queue)
	}
}

// Retention deletes the lane of a key that has been idle longer than
// its age, and only such a lane: not one with its own limit, an
// available or a claimed item, or idle for less; and what gives the key
// work again (an enqueue, a revive, a limit) opens it again.
func testFlowLanesPurged(e *env) {
	// Each key in a queue of its own, so that each claim serves its lane.
	const queue = "flow-purge"
	q := func(key string) string { return queue + "-" + key }
	owner := e.owner(e.s)
	// gone and revived end; limited ends but has its own limit; busy keeps
	// a claimed item; waiting has an item due in three hours.
	e.complete(e.s, e.laneItem(q("gone"), "gone", core.ItemSpec{}), "")
	// revived's item dies late enough for retention to keep it.
	dead := e.laneItem(q("revived"), "revived", core.ItemSpec{MaxAttempts: 1})
	if _, err := e.at(90*time.Minute).Fail(e.ctx, dead, core.FailParams{Error: "x"}); err != nil {
		e.t.Fatal(err)
	}
	if err := e.s.SetLimit(e.ctx, core.Limit{Queue: q("limited"), Key: "limited", Concurrency: 1}); err != nil {
		e.t.Fatal(err)
	}
	e.complete(e.s, e.laneItem(q("limited"), "limited", core.ItemSpec{}), "")
	e.laneItem(q("busy"), "busy", core.ItemSpec{})
	e.enqueueOne(e.s, core.ItemSpec{Queue: q("waiting"), FlowKey: "waiting", Delay: 3 * time.Hour})
	for _, key := range []string{"gone", "revived", "limited", "busy", "waiting"} {
		e.setIdle(q(key))
	}

	if r, err := e.at(30*time.Minute).Purge(e.ctx, core.PurgeParams{OlderThan: time.Hour}); err != nil || r.Lanes != 0 {
		e.t.Fatalf("Purge with no lane idle long enough = %+v, %v; want no lane", r, err)
	}
	r, err := e.at(2*time.Hour).Purge(e.ctx, core.PurgeParams{OlderThan: time.Hour})
	if err != nil || r.Lanes != 2 {
		e.t.Fatalf("Purge = %+v, %v; want 2 lanes (gone, revived)", r, err)
	}
	if r, err := e.at(2*time.Hour).Purge(e.ctx, core.PurgeParams{OlderThan: time.Hour}); err != nil || r.Lanes != 0 {
		e.t.Fatalf("second Purge = %+v, %v; want no lane", r, err)
	}
	if ls, err := e.s.Limits(e.ctx, q("limited")); err != nil || len(ls) != 1 || ls[0].Key != "limited" {
		e.t.Fatalf("Limits after Purge = %v, %v; want limited's, kept", ls, err)
	}

	// Work again on the deleted lanes: an enqueue and a revive each open
	// theirs, a limit too.
	again := e.enqueueOne(e.s, core.ItemSpec{Queue: q("gone"), FlowKey: "gone"})
	if cs := e.claim(e.s, owner, q("gone"), 10); len(cs) != 1 || cs[0].ID != again {
		e.t.Fatalf("after its lane's deletion claimed %v of gone; want its new item", cs)
	}
	if err := e.s.Revive(e.ctx, dead.ID); err != nil {
		e.t.Fatal(err)
	}
	if cs := e.claim(e.s, owner, q("revived"), 10); len(cs) != 1 || cs[0].ID != dead.ID {
		e.t.Fatalf("after its lane's deletion claimed %v of revived; want the revived item", cs)
	}
	if err := e.s.SetLimit(e.ctx, core.Limit{Queue: q("gone"), Key: "unseen", Rate: 1, Per: time.Second}); err != nil {
		e.t.Fatal(err)
	}
	if ls, err := e.s.Limits(e.ctx, q("gone")); err != nil || len(ls) != 1 || ls[0].Key != "unseen" {
		e.t.Fatalf("Limits after a limit on a key with no lane = %v, %v; want unseen's", ls, err)
	}
}

// What gives a lane work or a limit while retention deletes the lane
// (idle, old) must still find it there or open it: here a limit set on
// such a key, with retention committing inside the limit's transaction,
// just before it updates the lane. The store finds its lanes by an
// update that locks them and opens only those it missed, so the lane is
// deleted before the update, missed, opened and given the limit. Opened
// first and updated after (as an enqueue did), the open found the lane
// there and took no lock on it (PostgreSQL): retention deleted it in
// between, and the update found nothing: the limit was lost, or, for an
// enqueue, its item left with no turn. An enqueue uses the same path;
// its own uncommitted items make retention wait for it on some databases
// (a locking read of the items), so a limit shows the race everywhere.
func testFlowLanePurgedWhileGivenWork(e *env) {
	if e.caps.SingleWriter {
		e.t.Skipf("dialect %s runs one write transaction at a time (Capabilities.SingleWriter): no retention pass can commit inside another write", e.d.Name())
	}
	const queue = "flow-purge-race"
	e.complete(e.s, e.laneItem(queue, "k", core.ItemSpec{}), "")
	e.setIdle(queue)

	later := e.at(2 * time.Hour)
	purged := -1
	ctx := fault.With(e.ctx, fault.LanesBeforeUpdate, fault.Rule{Action: fault.Call, Times: 1, Func: func(context.Context) error {
		// Another transaction, bounded: one that waited for the limit's
		// locks would wait for ever, the limit for it.
		pctx, cancel := context.WithTimeout(e.ctx, time.Minute)
		defer cancel()
		r, err := later.Purge(pctx, core.PurgeParams{OlderThan: time.Hour})
		if err != nil {
			e.t.Errorf("Purge inside the limit's transaction: %v", err)
		}
		purged = r.Lanes
		return nil
	}})
	if err := e.s.SetLimit(ctx, core.Limit{Queue: queue, Key: "k", Concurrency: 1}); err != nil {
		e.t.Fatalf("SetLimit: %v", err)
	}
	if purged != 1 {
		e.t.Fatalf("retention inside the limit's transaction deleted %d lanes, want the idle one: the scenario did not happen", purged)
	}
	if ls, err := e.s.Limits(e.ctx, queue); err != nil || len(ls) != 1 || ls[0].Key != "k" || ls[0].Concurrency != 1 {
		e.t.Fatalf("Limits = %v, %v; want k's: the lane was deleted under the limit", ls, err)
	}
	id := e.enqueueOne(e.s, core.ItemSpec{Queue: queue, FlowKey: "k"})
	if cs := e.claim(e.s, e.owner(e.s), queue, 10); len(cs) != 1 || cs[0].ID != id {
		e.t.Fatalf("after the limit claimed %v, want the key's new item", cs)
	}
}
