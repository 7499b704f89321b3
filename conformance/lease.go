package conformance

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// Guarantee 3: a heartbeat keeps its owner alive and writes nothing else:
// not one of the owner's claims changes, and the reaper removes only the
// owner that did not heartbeat.
func testHeartbeatOwnerOnly(e *env) {
	const queue = "heartbeat"
	e.enqueue(e.s, make2n(queue, 2)...)
	a, quiet := e.owner(e.s), e.owner(e.s)
	mine := e.claimLease(e.s, a, queue, 3, time.Minute)
	if len(mine) != 3 {
		e.t.Fatalf("claimed %d, want 3", len(mine))
	}
	before := map[uuid.UUID]core.Item{}
	for _, c := range mine {
		before[c.ID] = e.get(c.ID)
	}
	// Two hours on, a heartbeats; an hour after that a reaper with a
	// 90-minute threshold finds a fresh and quiet stale.
	if err := e.at(2*time.Hour).Heartbeat(e.ctx, a); err != nil {
		e.t.Fatalf("Heartbeat: %v", err)
	}
	for _, c := range mine {
		if d := itemDiff(before[c.ID], e.get(c.ID)); d != "" {
			e.t.Errorf("item %s changed by its owner's heartbeat: %s", c.ID, d)
		}
	}
	r, err := e.at(3*time.Hour).Reap(e.ctx, core.ReapParams{StaleAfter: 90 * time.Minute})
	if err != nil {
		e.t.Fatalf("Reap: %v", err)
	}
	// a's claims expired long ago while a was alive: timeouts, not crashes.
	if r.OwnersRemoved != 1 || r.Crashed != 0 || r.TimedOut != 3 {
		e.t.Errorf("Reap = %+v; want the quiet owner removed and a's 3 expired claims timed out", r)
	}
	if err := e.s.Heartbeat(e.ctx, a); err != nil {
		e.t.Errorf("heartbeat of the owner that kept beating = %v, want nil", err)
	}
	if err := e.s.Heartbeat(e.ctx, quiet); !errors.Is(err, core.ErrOwnerLost) {
		e.t.Errorf("heartbeat of the reaped owner = %v, want ErrOwnerLost", err)
	}
}

// Guarantee 3: a claim's lease is its deadline whatever its owner does: an
// owner that heartbeats on time does not keep a claim whose lease ran
// out, which the reaper times out (an attempt used, no crash); and every
// claim of an owner gone stale is a crash, even with hours of lease left.
func testHeartbeatNoLease(e *env) {
	const queue = "deadline"
	e.enqueue(e.s, make2n(queue, 1)...)
	alive, dead := e.owner(e.s), e.owner(e.s)
	short := e.claimLease(e.s, alive, queue, 1, time.Minute)
	long := e.claimLease(e.s, dead, queue, 1, 6*time.Hour)
	if len(short) != 1 || len(long) != 1 {
		e.t.Fatalf("claimed %d and %d, want 1 and 1", len(short), len(long))
	}
	later := e.at(10 * time.Minute)
	if err := later.Heartbeat(e.ctx, alive); err != nil {
		e.t.Fatalf("Heartbeat: %v", err)
	}
	r, err := later.Reap(e.ctx, core.ReapParams{StaleAfter: 5 * time.Minute})
	if err != nil {
		e.t.Fatalf("Reap: %v", err)
	}
	if r != (core.ReapResult{OwnersRemoved: 1, Crashed: 1, TimedOut: 1}) {
		e.t.Fatalf("Reap = %+v; want the stale owner removed, its 6-hour claim a crash, the heartbeating owner's expired claim a timeout", r)
	}
	if it := e.get(short[0].ID); it.State != core.StateAvailable || it.Attempt != 1 || it.CrashCount != 0 {
		e.t.Errorf("timed-out item: %s, attempt %d, crashes %d; want available, 1, 0", it.State, it.Attempt, it.CrashCount)
	}
	if it := e.get(long[0].ID); it.State != core.StateAvailable || it.Attempt != 0 || it.CrashCount != 1 {
		e.t.Errorf("crashed item: %s, attempt %d, crashes %d; want available, 0, 1", it.State, it.Attempt, it.CrashCount)
	}
}

// Guarantee 2 and 3: ExtendMany moves the leases of the claims still held,
// on the database clock, reports exactly the lost ones and changes
// nothing else.
func testExtendMany(e *env) {
	const queue = "extend"
	e.enqueue(e.s, make2n(queue, 3)...)
	a := e.owner(e.s)
	cs := e.claimLease(e.s, a, queue, 4, time.Minute)
	if len(cs) != 4 {
		e.t.Fatalf("claimed %d, want 4", len(cs))
	}
	done, cancelled, kept := cs[0], cs[1], cs[2:]
	e.complete(e.s, done, "")
	if err := e.s.Cancel(e.ctx, cancelled.ID); err != nil {
		e.t.Fatalf("Cancel: %v", err)
	}
	other := e.claimOne(e.s, e.owner(e.s), queue)
	otherBefore := e.get(other.ID)

	future := e.at(time.Hour)
	t0 := e.now(future)
	lost, err := future.ExtendMany(e.ctx, cs, 10*time.Minute)
	t1 := e.now(future)
	if err != nil {
		e.t.Fatalf("ExtendMany: %v", err)
	}
	want := []uuid.UUID{done.ID, cancelled.ID}
	slices.SortFunc(want, idLess)
	if !slices.Equal(lost, want) {
		e.t.Errorf("ExtendMany lost %v, want exactly %v (the completed and the cancelled)", lost, want)
	}
	slack := e.clockSlack()
	for _, c := range kept {
		if it := e.get(c.ID); !between(it.LeaseExpiresAt, t0.Add(10*time.Minute), t1.Add(10*time.Minute), slack) || it.State != core.StateClaimed {
			e.t.Errorf("item %s: %s, lease %v; want claimed, lease within [%v, %v]", c.ID, it.State, it.LeaseExpiresAt, t0.Add(10*time.Minute), t1.Add(10*time.Minute))
		}
	}
	if it := e.get(done.ID); it.State != core.StateCompleted || !it.LeaseExpiresAt.IsZero() {
		e.t.Errorf("completed item after ExtendMany: %s, lease %v; want completed, none", it.State, it.LeaseExpiresAt)
	}
	if d := itemDiff(otherBefore, e.get(other.ID)); d != "" {
		e.t.Errorf("another owner's claim changed: %s", d)
	}
	// The extension holds: an hour and five minutes on, nothing times out.
	if r, err := e.at(65*time.Minute).Reap(e.ctx, core.ReapParams{StaleAfter: 2 * time.Hour}); err != nil || r.TimedOut != 1 {
		e.t.Errorf("Reap after the extension = %+v, %v; want only the other owner's unextended claim timed out", r, err)
	}
	if err := e.s.Extend(e.ctx, done, time.Minute); !errors.Is(err, core.ErrClaimLost) {
		e.t.Errorf("Extend of a completed claim = %v, want ErrClaimLost", err)
	}
	// Lost names what was taken away: the cancelled item, and the other
	// owner's claim, which the reaper timed out above; not the item
	// completed under its own claim, nor the claims still held.
	wantLost := []uuid.UUID{cancelled.ID, other.ID}
	slices.SortFunc(wantLost, idLess)
	if lost, err := e.s.Lost(e.ctx, append(slices.Clone(cs), other)); err != nil || !slices.Equal(lost, wantLost) {
		e.t.Errorf("Lost = %v, %v; want %v (the cancelled item and the timed-out claim)", lost, err, wantLost)
	}
}

// Guarantee 3: on a database with row locks, a heartbeat (and a reaper
// removing another owner) returns promptly while a fence holds one of the
// owner's claimed rows: a liveness signal never waits for a fence.
func testHeartbeatUnderFence(e *env) {
	if e.caps.LockClause == "" {
		e.t.Skip("the database has no row locks: a fence holds its only writer (Capabilities.LockClause is empty)")
	}
	const queue, hold = "hb-fence", 3 * time.Second
	e.enqueue(e.s, make2n(queue, 1)...)
	a := e.owner(e.s)
	// Leases that outlast the reaper's clock: the reaper has an owner to
	// remove and no claim to release (a release would rightly wait for the
	// fence).
	cs := e.claimLease(e.s, a, queue, 2, 2*time.Hour)
	if len(cs) != 2 {
		e.t.Fatalf("claimed %d, want 2", len(cs))
	}
	e.owner(e.s) // stale an hour on, for the reaper to remove
	inside := make(chan struct{})
	var once sync.Once
	fenced := make(chan error, 1)
	go func() {
		// fn runs again if the transaction is retried.
		_, err := e.s.Fence(e.ctx, cs[0], func(ctx context.Context, f *core.Fenced) error {
			once.Do(func() { close(inside) })
			select {
			case <-time.After(hold):
			case <-ctx.Done():
			}
			return f.Complete(ctx, nil)
		})
		fenced <- err
	}()
	<-inside
	ctx, cancel := context.WithTimeout(e.ctx, hold)
	defer cancel()
	start := time.Now()
	err := e.at(time.Hour).Heartbeat(ctx, a)
	took := time.Since(start)
	if err != nil {
		e.t.Errorf("Heartbeat while a fence holds a claimed row = %v after %v", err, took)
	} else if took > hold/2 {
		e.t.Errorf("Heartbeat took %v while a fence held a claimed row for %v: it waited on the fence", took, hold)
	}
	start = time.Now()
	r, err := e.at(time.Hour).Reap(ctx, core.ReapParams{StaleAfter: 30 * time.Minute})
	if err != nil || r.OwnersRemoved != 1 {
		e.t.Errorf("Reap while a fence holds a claimed row = %+v, %v after %v; want one owner removed", r, err, time.Since(start))
	}
	if err := <-fenced; err != nil {
		e.t.Fatalf("Fence: %v", err)
	}
}

// Guarantee 2: a store method called inside a fence with the fence's
// context returns ErrInsideFence at once instead of waiting on the lock
// the fence holds, and the fence can still commit through its handle.
func testFenceStoreCallRefused(e *env) {
	const queue = "inside"
	e.enqueue(e.s, make2n(queue, 1)...)
	a := e.owner(e.s)
	cs := e.claim(e.s, a, queue, 2)
	if len(cs) != 2 {
		e.t.Fatalf("claimed %d, want 2", len(cs))
	}
	other := e.at(0) // another store on the same database
	held, err := e.s.Fence(e.ctx, cs[0], func(ctx context.Context, f *core.Fenced) error {
		start := time.Now()
		for name, call := range map[string]func() error{
			"Complete":                  func() error { return e.s.Complete(ctx, cs[0], nil) },
			"Complete of another claim": func() error { return other.Complete(ctx, cs[1], nil) },
			"Heartbeat":                 func() error { return e.s.Heartbeat(ctx, a) },
			"Enqueue":                   func() error { _, err := e.s.Enqueue(ctx, core.ItemSpec{Queue: queue}); return err },
			"Fence": func() error {
				_, err := e.s.Fence(ctx, cs[1], func(context.Context, *core.Fenced) error { return nil })
				return err
			},
		} {
			if err := call(); !errors.Is(err, core.ErrInsideFence) {
				e.t.Errorf("%s inside a fence = %v, want ErrInsideFence", name, err)
			}
		}
		if took := time.Since(start); took > 2*time.Second {
			e.t.Errorf("the refused calls took %v, want them refused at once", took)
		}
		return f.Complete(ctx, []byte(`{"inside":true}`))
	})
	if err != nil || !held {
		e.t.Fatalf("Fence = %v, %v; want held", held, err)
	}
	if it := e.get(cs[0].ID); it.State != core.StateCompleted {
		e.t.Errorf("fenced item: %s, want completed", it.State)
	}
	if it := e.get(cs[1].ID); it.State != core.StateClaimed {
		e.t.Errorf("item the refused calls named: %s, want still claimed", it.State)
	}
	// Outside the fence the same store works as ever.
	e.complete(e.s, cs[1], "")
}

// Guarantee 2: Fenced.Fail records the failed attempt in the fence's
// transaction, together with the caller's writes, or with the last
// attempt or Discard dead-letters the item.
func testFenceFail(e *env) {
	const queue = "fence-fail"
	table := e.sideTable()
	retry := e.enqueueOne(e.s, core.ItemSpec{Queue: queue, MaxAttempts: 3})
	e.enqueueOne(e.s, core.ItemSpec{Queue: queue, MaxAttempts: 3})
	a := e.owner(e.s)
	cs := e.claim(e.s, a, queue, 2)
	if len(cs) != 2 {
		e.t.Fatalf("claimed %d, want 2", len(cs))
	}
	for i, p := range []core.FailParams{{Error: "try later", RetryIn: time.Hour}, {Error: "give up", Discard: true}} {
		var dead bool
		held, err := e.s.Fence(e.ctx, cs[i], func(ctx context.Context, f *core.Fenced) error {
			if _, err := f.ExecContext(ctx, e.sideInsert(table), cs[i].ID.String()); err != nil {
				return err
			}
			var err error
			dead, err = f.Fail(ctx, p)
			return err
		})
		if err != nil || !held {
			e.t.Fatalf("Fence with Fail(%+v) = %v, %v; want held", p, held, err)
		}
		it := e.get(cs[i].ID)
		if p.Discard {
			if !dead || it.State != core.StateDead || it.LastError != p.Error {
				e.t.Errorf("discarded item: dead %v, %s, error %q; want dead with %q", dead, it.State, it.LastError, p.Error)
			}
			continue
		}
		if dead || it.State != core.StateAvailable || it.LastError != p.Error || !it.AvailableAt.After(e.now(e.s).Add(50*time.Minute)) {
			e.t.Errorf("failed item: dead %v, %s, error %q, available at %v; want available in an hour with %q", dead, it.State, it.LastError, it.AvailableAt, p.Error)
		}
	}
	if n := e.sideCount(table); n != 2 {
		e.t.Errorf("%d effects, want the 2 written with the failures", n)
	}
	// A fence that fails and then errors commits neither.
	c := e.claimOne(e.at(2*time.Hour), a, queue)
	if c.ID != retry {
		e.t.Fatalf("claimed %s, want the retried %s", c.ID, retry)
	}
	boom := errors.New("boom")
	held, err := e.s.Fence(e.ctx, c, func(ctx context.Context, f *core.Fenced) error {
		if _, err := f.Fail(ctx, core.FailParams{Error: "x"}); err != nil {
			return err
		}
		return boom
	})
	if !held || !errors.Is(err, boom) {
		e.t.Fatalf("Fence = %v, %v; want held, boom", held, err)
	}
	if it := e.get(c.ID); it.State != core.StateClaimed || it.Attempt != 2 {
		e.t.Errorf("item after a rolled-back Fail: %s, attempt %d; want claimed, 2", it.State, it.Attempt)
	}
	// The history holds the committed failure, not the rolled-back one.
	e.wantHistory(c.ID, "1 failed try later")
}
