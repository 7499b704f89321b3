package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// Guarantee 2: a holder whose claim was reaped and taken by someone else
// changes nothing: every fenced mutation reports the loss, and the new
// holder's row is left exactly as it was.
func testFenceStaleHolder(e *env) {
	const queue = "stale"
	id := e.enqueueOne(e.s, core.ItemSpec{Queue: queue, Payload: []byte(`{"job":1}`)})
	a := e.owner(e.s)
	ca := e.claimOne(e.s, a, queue)

	// A stops heartbeating; two hours later a reaper finds it gone.
	future := e.at(2 * time.Hour)
	r, err := future.Reap(e.ctx, core.ReapParams{StaleAfter: time.Hour})
	if err != nil {
		e.t.Fatalf("Reap: %v", err)
	}
	if r != (core.ReapResult{OwnersRemoved: 1, Crashed: 1}) {
		e.t.Fatalf("Reap = %+v, want one owner removed and one claim released as a crash", r)
	}
	// Lost while nobody holds it.
	if err := e.s.Complete(e.ctx, ca, []byte(`{"by":"a"}`)); !errors.Is(err, core.ErrClaimLost) {
		e.t.Fatalf("stale holder's Complete after the reap = %v, want ErrClaimLost", err)
	}
	if it := e.get(id); it.State != core.StateAvailable || it.Result != nil {
		e.t.Fatalf("after the stale holder's Complete: state %s, result %s; want available, no result", it.State, it.Result)
	}

	// The item was released at the reaper's clock: B claims on that clock.
	b := e.owner(future)
	cb := e.claimOne(future, b, queue)
	if cb.ID != id || cb.Token == ca.Token {
		e.t.Fatalf("B claimed %s with token %s; want %s with a new token (A's was %s)", cb.ID, cb.Token, id, ca.Token)
	}
	before := e.get(id)

	// A comes back and tries everything.
	if err := e.s.Complete(e.ctx, ca, []byte(`{"by":"a"}`)); !errors.Is(err, core.ErrClaimLost) {
		e.t.Errorf("stale Complete = %v, want ErrClaimLost", err)
	}
	if lost, err := e.s.CompleteMany(e.ctx, []core.Completion{{Claim: ca}}); err != nil || !slices.Equal(lost, []uuid.UUID{id}) {
		e.t.Errorf("stale CompleteMany = lost %v, %v; want lost [%s]", lost, err, id)
	}
	if dead, err := e.s.Fail(e.ctx, ca, core.FailParams{Error: "a failed"}); !errors.Is(err, core.ErrClaimLost) || dead {
		e.t.Errorf("stale Fail = %v, %v; want ErrClaimLost", dead, err)
	}
	if dead, err := e.s.Fail(e.ctx, ca, core.FailParams{Error: "a discards", Discard: true}); !errors.Is(err, core.ErrClaimLost) || dead {
		e.t.Errorf("stale Fail(Discard) = %v, %v; want ErrClaimLost", dead, err)
	}
	if err := e.s.Release(e.ctx, ca, 0); !errors.Is(err, core.ErrClaimLost) {
		e.t.Errorf("stale Release = %v, want ErrClaimLost", err)
	}
	if err := e.s.Extend(e.ctx, ca, time.Hour); !errors.Is(err, core.ErrClaimLost) {
		e.t.Errorf("stale Extend = %v, want ErrClaimLost", err)
	}
	called := false
	held, err := e.s.Fence(e.ctx, ca, func(ctx context.Context, f *core.Fenced) error {
		called = true
		return f.Complete(ctx, []byte(`{"by":"a"}`))
	})
	if held || err != nil || called {
		e.t.Errorf("stale Fence = held %v, %v, fn called %v; want not held, no error, fn not called", held, err, called)
	}
	if d := itemDiff(before, e.get(id)); d != "" {
		e.t.Errorf("the stale holder changed the item: %s", d)
	}

	// B still holds it and finishes.
	e.complete(future, cb, `{"by":"b"}`)
	it := e.get(id)
	if it.State != core.StateCompleted || it.ClaimToken != cb.Token || !jsonEqual(it.Result, []byte(`{"by":"b"}`)) {
		e.t.Errorf("after B's Complete: state %s, token %s, result %s; want completed by %s with {\"by\":\"b\"}", it.State, it.ClaimToken, it.Result, cb.Token)
	}
}

// Guarantee 2: what fn writes through the fence's handle commits with the
// fence, or not at all: not when fn fails, not when its context is
// cancelled half way; and the claim survives both.
func testFenceAtomic(e *env) {
	const queue, out = "fence", "fence-out"
	side := e.sideTable()
	insert := e.sideInsert(side)
	id := e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	o := e.owner(e.s)
	c := e.claimOne(e.s, o, queue)

	untouched := func(step string) {
		e.t.Helper()
		if n := e.total(out); n != 0 {
			e.t.Errorf("%s: %d items enqueued through the fence exist, want 0", step, n)
		}
		if n := e.sideCount(side); n != 0 {
			e.t.Errorf("%s: %d rows written through the fence exist, want 0", step, n)
		}
		if it := e.get(id); it.State != core.StateClaimed || it.ClaimToken != c.Token || it.Result != nil {
			e.t.Errorf("%s: item is %s with token %s and result %s; want still claimed with %s, no result", step, it.State, it.ClaimToken, it.Result, c.Token)
		}
	}
	work := func(ctx context.Context, f *core.Fenced, row string) error {
		if f.Claim().ID != id || f.Claim().Token != c.Token {
			return errors.New("Fenced.Claim is not the claim the fence was entered with")
		}
		if _, err := f.Enqueue(ctx, core.ItemSpec{Queue: out, Key: "once"}); err != nil {
			return err
		}
		if _, err := f.ExecContext(ctx, insert, row); err != nil {
			return err
		}
		return f.Complete(ctx, []byte(`{"done":true}`))
	}

	// fn fails after writing everything.
	errBoom := errors.New("boom")
	held, err := e.s.Fence(e.ctx, c, func(ctx context.Context, f *core.Fenced) error {
		if err := work(ctx, f, "failed"); err != nil {
			return err
		}
		return errBoom
	})
	if !held || !errors.Is(err, errBoom) {
		e.t.Errorf("Fence whose fn failed = held %v, %v; want held, the fn's error", held, err)
	}
	untouched("after a fence whose fn failed")

	// The connection is abandoned half way: the context ends between two
	// statements of the transaction.
	ctx, cancel := context.WithCancel(e.ctx)
	var afterCancel error
	_, err = e.s.Fence(ctx, c, func(ctx context.Context, f *core.Fenced) error {
		if _, err := f.Enqueue(ctx, core.ItemSpec{Queue: out, Key: "once"}); err != nil {
			return err
		}
		if _, err := f.ExecContext(ctx, insert, "abandoned"); err != nil {
			return err
		}
		cancel()
		afterCancel = f.Complete(ctx, []byte(`{"done":true}`))
		return afterCancel
	})
	cancel()
	switch {
	case afterCancel == nil:
		e.t.Errorf("a statement run in the fence after its context was cancelled succeeded")
	case err == nil:
		e.t.Errorf("Fence whose context was cancelled mid-transaction returned no error")
	case !errors.Is(err, context.Canceled):
		e.t.Errorf("Fence whose context was cancelled mid-transaction = %v; want an error matching context.Canceled", err)
	}
	untouched("after a fence whose context was cancelled mid-transaction")

	// A fresh fence on the same claim commits everything, the caller's own
	// statement included.
	calls := 0
	held, err = e.s.Fence(e.ctx, c, func(ctx context.Context, f *core.Fenced) error {
		calls++
		return work(ctx, f, "committed")
	})
	if !held || err != nil {
		e.t.Fatalf("Fence after the failed ones = held %v, %v; want held, no error (the claim must survive them)", held, err)
	}
	if n := e.total(out); n != 1 {
		e.t.Errorf("%d items enqueued through the committed fence, want 1", n)
	}
	if n := e.sideCount(side); n != 1 {
		e.t.Errorf("%d rows written through the committed fence, want 1", n)
	}
	if it := e.get(id); it.State != core.StateCompleted || !jsonEqual(it.Result, []byte(`{"done":true}`)) {
		e.t.Errorf("item after the committed fence: %s, result %s; want completed with {\"done\":true}", it.State, it.Result)
	}
	if calls != 1 {
		e.t.Logf("fn ran %d times (the fence's transaction was retried)", calls)
	}

	// Once the item is finished, the claim fences nothing.
	called := false
	held, err = e.s.Fence(e.ctx, c, func(context.Context, *core.Fenced) error { called = true; return nil })
	if held || err != nil || called {
		e.t.Errorf("Fence on a completed item = held %v, %v, fn called %v; want not held, no error, fn not called", held, err, called)
	}
}

// Guarantee 2: completing again with the token that already completed the
// item succeeds and changes nothing (a barrier counts the arrival once);
// CompleteMany reports exactly the claims that were lost.
func testCompleteIdempotent(e *env) {
	e.run("Single", func(e *env) {
		const queue = "again"
		id := e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
		o := e.owner(e.s)
		c := e.claimOne(e.s, o, queue)
		e.complete(e.s, c, `{"n":1}`)
		first := e.get(id)
		if err := e.s.Complete(e.ctx, c, []byte(`{"n":1}`)); err != nil {
			e.t.Fatalf("second Complete with the same claim = %v, want nil", err)
		}
		if lost, err := e.s.CompleteMany(e.ctx, []core.Completion{{Claim: c, Result: []byte(`{"n":1}`)}}); err != nil || len(lost) != 0 {
			e.t.Fatalf("CompleteMany again with the same claim = lost %v, %v; want nothing lost", lost, err)
		}
		if d := itemDiff(first, e.get(id)); d != "" {
			e.t.Errorf("completing again changed the item: %s", d)
		}
		e.wantCounts(queue, map[core.State]int64{core.StateCompleted: 1})
	})

	e.run("AtBarrier", func(e *env) {
		const queue, kidsQ = "again-parent", "again-kids"
		e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
		o := e.owner(e.s)
		b := e.fanOut(e.s, e.claimOne(e.s, o, queue), core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "again-join"}}, kids(kidsQ, "k", 2))
		cs := e.claimAll(e.s, o, kidsQ, 2)
		e.complete(e.s, cs[0], `{"k":0}`)
		e.complete(e.s, cs[0], `{"k":0}`)
		if lost, err := e.s.CompleteMany(e.ctx, []core.Completion{{Claim: cs[0], Result: []byte(`{"k":0}`)}}); err != nil || len(lost) != 0 {
			e.t.Fatalf("CompleteMany again = lost %v, %v", lost, err)
		}
		held, err := e.s.Fence(e.ctx, cs[0], func(ctx context.Context, f *core.Fenced) error { return f.Complete(ctx, []byte(`{"k":0}`)) })
		if held || err != nil {
			e.t.Fatalf("Fence on the completed child = held %v, %v; want not held (nothing to fence), no error", held, err)
		}
		if got := e.barrier(b.ID); got.Arrived != 1 || got.Failed != 0 || got.Fired() {
			e.t.Fatalf("barrier after one child completed three times: arrived %d, failed %d, fired %v; want 1, 0, not fired", got.Arrived, got.Failed, got.Fired())
		}
		e.complete(e.s, cs[1], `{"k":1}`)
		e.complete(e.s, cs[1], `{"k":1}`)
		got := e.barrier(b.ID)
		if got.Arrived != 2 || got.Failed != 0 || !got.Fired() {
			e.t.Errorf("barrier after both children completed: arrived %d, failed %d, fired %v; want 2, 0, fired", got.Arrived, got.Failed, got.Fired())
		}
		if n := e.joinsOf(b.ID); n != 1 {
			e.t.Errorf("%d join items, want 1", n)
		}
	})

	e.run("ManyReportsExactlyTheLost", func(e *env) {
		const queue, other = "mix", "mix-lost"
		e.enqueue(e.s, make2n(queue, 2)[:3]...)
		reclaimed := e.enqueueOne(e.s, core.ItemSpec{Queue: other})
		a, a2 := e.owner(e.s), e.owner(e.s)
		cs := e.claimAll(e.s, a, queue, 3)
		held, done, cancelled := cs[0], cs[1], cs[2]
		cr := e.claimOne(e.s, a2, other)

		e.complete(e.s, done, "")
		if err := e.s.Cancel(e.ctx, cancelled.ID); err != nil {
			e.t.Fatalf("Cancel: %v", err)
		}
		// a2 dies and its item goes to B; a stays alive (it heartbeats on
		// the reaper's clock, and extends the claim it still works on).
		future := e.at(2 * time.Hour)
		if err := future.Heartbeat(e.ctx, a); err != nil {
			e.t.Fatalf("Heartbeat: %v", err)
		}
		if err := future.Extend(e.ctx, held, time.Hour); err != nil {
			e.t.Fatalf("Extend: %v", err)
		}
		if r, err := future.Reap(e.ctx, core.ReapParams{StaleAfter: time.Hour}); err != nil || r.OwnersRemoved != 1 || r.Crashed != 1 {
			e.t.Fatalf("Reap = %+v, %v; want one owner removed, one claim released", r, err)
		}
		b := e.owner(future)
		cb := e.claimOne(future, b, other)
		if cb.ID != reclaimed {
			e.t.Fatalf("B claimed %s, want %s", cb.ID, reclaimed)
		}

		lost, err := e.s.CompleteMany(e.ctx, []core.Completion{{Claim: held}, {Claim: done}, {Claim: cancelled}, {Claim: cr}})
		if err != nil {
			e.t.Fatalf("CompleteMany: %v", err)
		}
		slices.SortFunc(lost, idLess)
		want := []uuid.UUID{cancelled.ID, cr.ID}
		slices.SortFunc(want, idLess)
		if !slices.Equal(lost, want) {
			e.t.Errorf("CompleteMany lost %v, want exactly %v (cancelled, and re-claimed by another owner)", lost, want)
		}
		for _, x := range []struct {
			id    uuid.UUID
			state core.State
			token uuid.UUID
		}{{held.ID, core.StateCompleted, held.Token}, {done.ID, core.StateCompleted, done.Token}, {cancelled.ID, core.StateCancelled, uuid.Nil}, {cr.ID, core.StateClaimed, cb.Token}} {
			if it := e.get(x.id); it.State != x.state || (x.token != uuid.Nil && it.ClaimToken != x.token) {
				e.t.Errorf("item %s is %s with token %s, want %s with %s", x.id, it.State, it.ClaimToken, x.state, x.token)
			}
		}
	})
}

// fenceLostToReaper checks the other end testFenceHoldsClaim may have
// on a database of serializable transactions: it may abort the fence's
// transaction rather than the reaper's (its conflict detection picks
// either), and the fence, run again, finds its claim released and says
// so. The guarantee holds if nothing the fence wrote committed and the
// reaper released the claim as a crash.
func fenceLostToReaper(e *env, table string, id uuid.UUID, r reapOutcome) {
	if r.err != nil || r.r.Crashed != 1 {
		e.t.Fatalf("the fence lost its claim, but Reap = %+v, %v; want it released as a crash", r.r, r.err)
	}
	if n := e.sideCount(table); n != 0 {
		e.t.Errorf("the fence lost its claim, and %d of its effects committed; want none", n)
	}
	if it := e.get(id); it.State != core.StateAvailable || it.CrashCount != 1 {
		e.t.Errorf("item after the reaper won: state %s, crashes %d; want available, 1", it.State, it.CrashCount)
	}
	e.t.Logf("the database aborted the fence's transaction, not the reaper's: the fence ran again and found its claim released")
}

// reapOutcome is what a Reap returned.
type reapOutcome struct {
	r   core.ReapResult
	err error
}

// errReapedUnderFence is what the fence function of testFenceHoldsClaim
// returns when a reaper released its claim while it ran.
var errReapedUnderFence = errors.New("a reaper released the claim while a fence held it")

// fenceHold is how long the fence function of testFenceHoldsClaim holds
// its claim open while a reaper tries to release it. It is a window, not a
// measurement: where the lock holds, the reaper cannot finish inside it
// however long it is.
const fenceHold = time.Second

// Guarantee 2: a fence holds its claim until it commits. A reaper that
// would release the claim while the fence's function runs waits for the
// fence, and then finds the item as the fence left it. (Without the lock
// the fence takes, the reaper would release the claim under the running
// fence, whose writes would then commit for an item someone else may hold.)
// A database of serializable transactions may abort the fence instead,
// which then finds its claim released: fenceLostToReaper checks that end.
func testFenceHoldsClaim(e *env) {
	const queue = "fence-hold"
	table := e.sideTable()
	id := e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	a := e.owner(e.s)
	c := e.claimOne(e.s, a, queue)

	// A stops heartbeating; a reaper two hours ahead finds it gone while
	// its fence is still open.
	future := e.at(2 * time.Hour)
	inside := make(chan struct{})
	var once sync.Once
	done := make(chan reapOutcome, 1)
	go func() {
		<-inside
		r, err := future.Reap(e.ctx, core.ReapParams{StaleAfter: time.Hour})
		done <- reapOutcome{r, err}
	}()
	var result *reapOutcome
	held, err := e.s.Fence(e.ctx, c, func(ctx context.Context, f *core.Fenced) error {
		if _, err := f.ExecContext(ctx, e.sideInsert(table), c.ID.String()); err != nil {
			return err
		}
		once.Do(func() { close(inside) })
		select {
		case r := <-done:
			result = &r
			return errReapedUnderFence
		case <-time.After(fenceHold):
		}
		return f.Complete(ctx, []byte(`{"held":true}`))
	})
	if errors.Is(err, errReapedUnderFence) {
		e.t.Fatalf("the reaper finished (%+v, %v) while the fence's function ran: the fence does not lock its claim against other writers (Capabilities.LockClause)", result.r, result.err)
	}
	once.Do(func() { close(inside) })
	if err == nil && !held && e.caps.RetryAttempts > 0 {
		fenceLostToReaper(e, table, id, <-done)
		return
	}
	if err != nil || !held {
		e.t.Fatalf("Fence = %v, %v; want held", held, err)
	}
	r := <-done
	if r.err != nil {
		e.t.Fatalf("Reap: %v", r.err)
	}
	if r.r != (core.ReapResult{OwnersRemoved: 1}) {
		e.t.Errorf("Reap after the fence committed = %+v, want the owner removed and nothing released (the item was completed)", r.r)
	}
	if it := e.get(id); it.State != core.StateCompleted || it.CrashCount != 0 {
		e.t.Errorf("item after the fence and the reaper: state %s, crashes %d; want completed, 0", it.State, it.CrashCount)
	}
	if n := e.sideCount(table); n != 1 {
		e.t.Errorf("%d effects, want 1", n)
	}
}

// Guarantee 2: held == false reports the fenced claim's own loss only.
// When fn fails with an error that wraps ErrClaimLost about another item
// (a stale claim of its own bookkeeping, say), the fence returns that
// error with held == true, and fn's writes are rolled back.
func testFenceOnlyOwnLossNotHeld(e *env) {
	const queue = "ownloss"
	e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	o := e.owner(e.s)
	cs := e.claimAll(e.s, o, queue, 2)
	a, other := cs[0], cs[1]
	if err := e.s.Cancel(e.ctx, other.ID); err != nil {
		e.t.Fatal(err)
	}
	otherLost := e.s.Complete(e.ctx, other, nil)
	if !errors.Is(otherLost, core.ErrClaimLost) {
		e.t.Fatalf("Complete of a cancelled item's claim = %v, want ErrClaimLost", otherLost)
	}
	held, err := e.s.Fence(e.ctx, a, func(ctx context.Context, f *core.Fenced) error {
		if _, err := f.Enqueue(ctx, core.ItemSpec{Queue: queue + "-side"}); err != nil {
			return err
		}
		return fmt.Errorf("bookkeeping of %s: %w", other.ID, otherLost)
	})
	if !held || !errors.Is(err, core.ErrClaimLost) {
		e.t.Errorf("fence whose fn failed with another item's lost claim = held %v, %v; want held, that error", held, err)
	}
	if n := e.total(queue + "-side"); n != 0 {
		e.t.Errorf("the failed fence's enqueue committed (%d items)", n)
	}
	if it := e.get(a.ID); it.State != core.StateClaimed || it.ClaimToken != a.Token {
		e.t.Errorf("fenced item after the failed fence: %s, token %s; want still claimed by %s", it.State, it.ClaimToken, a.Token)
	}
	// Its own loss is still held == false, nil.
	if err := e.s.Cancel(e.ctx, a.ID); err != nil {
		e.t.Fatal(err)
	}
	held, err = e.s.Fence(e.ctx, a, func(context.Context, *core.Fenced) error { return errors.New("must not run") })
	if held || err != nil {
		e.t.Errorf("fence on its own cancelled claim = held %v, %v; want not held, no error", held, err)
	}
}
