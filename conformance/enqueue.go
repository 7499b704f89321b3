package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// Enqueue with an idempotency key returns the existing item for a queue and
// key that already have one, also under concurrency, also in batches
// larger than one statement can carry.
func testEnqueueKey(e *env) {
	e.run("SameQueueSameKey", func(e *env) {
		x := e.enqueue(e.s, core.ItemSpec{Queue: "keys-a", Key: "k", Payload: []byte(`{"v":1}`)})[0]
		y := e.enqueue(e.s, core.ItemSpec{Queue: "keys-a", Key: "k", Payload: []byte(`{"v":2}`)})[0]
		if x.Existed || !y.Existed || y.ID != x.ID {
			e.t.Errorf("enqueue twice with the same key = %+v then %+v; want the same id, the second marked Existed", x, y)
		}
		if it := e.get(x.ID); !jsonEqual(it.Payload, []byte(`{"v":1}`)) || it.Key != "k" {
			e.t.Errorf("item after the repeated enqueue: payload %s, key %q; want the first payload, key k", it.Payload, it.Key)
		}
		z := e.enqueue(e.s, core.ItemSpec{Queue: "keys-b", Key: "k"})[0]
		if z.Existed || z.ID == x.ID {
			e.t.Errorf("the same key in another queue = %+v, want a new item", z)
		}
		both := e.enqueue(e.s, core.ItemSpec{Queue: "keys-a", Key: "dup"}, core.ItemSpec{Queue: "keys-a", Key: "dup"}, core.ItemSpec{Queue: "keys-a"}, core.ItemSpec{Queue: "keys-a"})
		if both[0].Existed || !both[1].Existed || both[1].ID != both[0].ID {
			e.t.Errorf("one batch with a key twice = %+v, %+v; want one item, the second marked Existed", both[0], both[1])
		}
		if both[2].Existed || both[3].Existed || both[2].ID == both[3].ID {
			e.t.Errorf("two items without a key = %+v, %+v; want two new items", both[2], both[3])
		}
		e.wantCounts("keys-a", map[core.State]int64{core.StateAvailable: 4})
		e.wantCounts("keys-b", map[core.State]int64{core.StateAvailable: 1})
	})

	e.run("Concurrent", func(e *env) {
		const queue, goroutines, keys = "keys-c", 8, 50
		got := make([][]core.EnqueueResult, goroutines) // [goroutine][key]
		var wg sync.WaitGroup
		start := make(chan struct{})
		for g := range goroutines {
			wg.Go(func() {
				got[g] = make([]core.EnqueueResult, keys)
				perm := rand.Perm(keys)
				specs := make([]core.ItemSpec, keys)
				for i, k := range perm {
					specs[i] = core.ItemSpec{Queue: queue, Key: fmt.Sprintf("key-%02d", k)}
				}
				<-start
				if g%2 == 0 { // all keys in one batch
					out, err := e.s.Enqueue(e.ctx, specs...)
					if err != nil {
						e.t.Errorf("goroutine %d: Enqueue(%d): %v", g, keys, err)
						return
					}
					for i, k := range perm {
						got[g][k] = out[i]
					}
					return
				}
				for i, k := range perm { // one key at a time
					out, err := e.s.Enqueue(e.ctx, specs[i])
					if err != nil {
						e.t.Errorf("goroutine %d: Enqueue(%s): %v", g, specs[i].Key, err)
						return
					}
					got[g][k] = out[0]
				}
			})
		}
		close(start)
		wg.Wait()
		if e.t.Failed() {
			return
		}
		for k := range keys {
			created := 0
			for g := range goroutines {
				if got[g][k].ID != got[0][k].ID {
					e.t.Errorf("key %d: goroutine %d got %s, goroutine 0 got %s", k, g, got[g][k].ID, got[0][k].ID)
				}
				if !got[g][k].Existed {
					created++
				}
			}
			if created != 1 {
				e.t.Errorf("key %d: %d enqueues reported a new item, want exactly 1", k, created)
			}
		}
		e.wantCounts(queue, map[core.State]int64{core.StateAvailable: keys})
	})

	e.run("LargerThanOneStatement", func(e *env) {
		const queue = "keys-big"
		// Well past the rows one statement can bind (9 parameters a row).
		n := min(max(5000, e.caps.MaxBindParams/9+500), 20000)
		specs := func(from, to int) []core.ItemSpec {
			out := make([]core.ItemSpec, 0, to-from)
			for i := from; i < to; i++ {
				out = append(out, core.ItemSpec{Queue: queue, Key: fmt.Sprintf("big-%d", i), Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))})
			}
			return out
		}
		first := e.enqueue(e.s, specs(0, n)...)
		ids := map[uuid.UUID]bool{}
		for i, x := range first {
			if x.Existed {
				e.t.Fatalf("item %d of a fresh batch marked Existed", i)
			}
			ids[x.ID] = true
		}
		if len(ids) != n {
			e.t.Fatalf("a batch of %d gave %d distinct ids", n, len(ids))
		}
		e.wantCounts(queue, map[core.State]int64{core.StateAvailable: int64(n)})

		// The last keys again, and as many new ones. (Kept small: binding
		// costs grow faster than the row count on some drivers.)
		const again = 100
		second := e.enqueue(e.s, specs(n-again, n+again)...)
		for i, x := range second {
			old := n - again + i
			if old < n && (!x.Existed || x.ID != first[old].ID) {
				e.t.Fatalf("key big-%d enqueued again = %+v, want Existed with %s", old, x, first[old].ID)
			}
			if old >= n && (x.Existed || ids[x.ID]) {
				e.t.Fatalf("new key big-%d = %+v, want a new item", old, x)
			}
		}
		e.wantCounts(queue, map[core.State]int64{core.StateAvailable: int64(n + again)})
		e.t.Logf("one Enqueue of %d items (bind limit %d)", n, e.caps.MaxBindParams)
	})
}

// EnqueueTx writes items inside the caller's transaction: they exist if and
// only if it commits (the outbox pattern), whether the transaction came from
// Store.Begin or from the application's own *sql.DB.
func testEnqueueTxOutbox(e *env) {
	side := e.sideTable()
	insert := e.sideInsert(side)
	spec := func(q string, n int) []core.ItemSpec {
		out := make([]core.ItemSpec, n)
		for i := range out {
			out[i] = core.ItemSpec{Queue: q, Payload: json.RawMessage(fmt.Sprintf(`{"order":%d}`, i))}
		}
		return out
	}

	tx, err := e.s.Begin(e.ctx)
	if err != nil {
		e.t.Fatalf("Begin: %v", err)
	}
	if _, err := e.s.EnqueueTx(e.ctx, tx, spec("outbox", 3)...); err != nil {
		e.t.Fatalf("EnqueueTx: %v", err)
	}
	if _, err := tx.ExecContext(e.ctx, insert, "rolled-back"); err != nil {
		e.t.Fatalf("own statement: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		e.t.Fatalf("Rollback: %v", err)
	}
	if n, m := e.total("outbox"), e.sideCount(side); n != 0 || m != 0 {
		e.t.Errorf("after rollback: %d items, %d rows; want none", n, m)
	}

	tx, err = e.s.Begin(e.ctx)
	if err != nil {
		e.t.Fatalf("Begin: %v", err)
	}
	out, err := e.s.EnqueueTx(e.ctx, tx, spec("outbox", 3)...)
	if err != nil || len(out) != 3 {
		e.t.Fatalf("EnqueueTx = %v, %v", out, err)
	}
	if _, err := tx.ExecContext(e.ctx, insert, "committed"); err != nil {
		e.t.Fatalf("own statement: %v", err)
	}
	if err := tx.Commit(); err != nil {
		e.t.Fatalf("Commit: %v", err)
	}
	e.wantCounts("outbox", map[core.State]int64{core.StateAvailable: 3})
	if m := e.sideCount(side); m != 1 {
		e.t.Errorf("after commit: %d rows of the caller's own, want 1", m)
	}
	for _, x := range out {
		e.get(x.ID)
	}

	// The application's own transaction, begun on its *sql.DB.
	for _, commit := range []bool{false, true} {
		stx, err := e.db.BeginTx(e.ctx, nil)
		if err != nil {
			e.t.Fatalf("BeginTx: %v", err)
		}
		if _, err := e.s.EnqueueTx(e.ctx, stx, spec("outbox-app", 2)...); err != nil {
			stx.Rollback()
			e.t.Fatalf("EnqueueTx in a *sql.Tx: %v", err)
		}
		if commit {
			err = stx.Commit()
		} else {
			err = stx.Rollback()
		}
		if err != nil {
			e.t.Fatalf("end *sql.Tx (commit %v): %v", commit, err)
		}
	}
	e.wantCounts("outbox-app", map[core.State]int64{core.StateAvailable: 2})
	if _, err := e.s.EnqueueTx(e.ctx, nil, spec("outbox", 1)...); !errors.Is(err, core.ErrInvalidInput) {
		e.t.Errorf("EnqueueTx(nil tx) = %v, want ErrInvalidInput", err)
	}
}

// Cancel takes an item out of play (its holder loses the claim; it counts
// as a failure at its barrier); Revive brings a dead one back, taking its
// failure back from a barrier that has not fired.
func testCancelRevive(e *env) {
	e.run("CancelClaimed", func(e *env) {
		id := e.enqueueOne(e.s, core.ItemSpec{Queue: "cancel"})
		c := e.claimOne(e.s, e.owner(e.s), "cancel")
		if err := e.s.Cancel(e.ctx, id); err != nil {
			e.t.Fatalf("Cancel(claimed) = %v", err)
		}
		if err := e.s.Complete(e.ctx, c, nil); !errors.Is(err, core.ErrClaimLost) {
			e.t.Errorf("holder's Complete after Cancel = %v, want ErrClaimLost", err)
		}
		if _, err := e.s.Fail(e.ctx, c, core.FailParams{}); !errors.Is(err, core.ErrClaimLost) {
			e.t.Errorf("holder's Fail after Cancel = %v, want ErrClaimLost", err)
		}
		before := e.get(id)
		if before.State != core.StateCancelled {
			e.t.Errorf("cancelled item is %s", before.State)
		}
		if err := e.s.Cancel(e.ctx, id); err != nil {
			e.t.Errorf("Cancel again = %v, want nil", err)
		}
		if err := e.s.Revive(e.ctx, id); !errors.Is(err, core.ErrNotDead) {
			e.t.Errorf("Revive(cancelled) = %v, want ErrNotDead", err)
		}
		if d := itemDiff(before, e.get(id)); d != "" {
			e.t.Errorf("cancelling again or reviving changed the item: %s", d)
		}
	})

	e.run("CancelFinished", func(e *env) {
		e.enqueue(e.s, make2n("finished", 1)...)
		cs := e.claimAll(e.s, e.owner(e.s), "finished", 2)
		e.complete(e.s, cs[0], "")
		if dead, err := e.s.Fail(e.ctx, cs[1], core.FailParams{Discard: true}); err != nil || !dead {
			e.t.Fatalf("Fail(Discard) = %v, %v", dead, err)
		}
		for _, c := range cs {
			before := e.get(c.ID)
			if err := e.s.Cancel(e.ctx, c.ID); !errors.Is(err, core.ErrFinished) {
				e.t.Errorf("Cancel(%s) = %v, want ErrFinished", before.State, err)
			}
			if d := itemDiff(before, e.get(c.ID)); d != "" {
				e.t.Errorf("refused Cancel changed the item: %s", d)
			}
		}
		if err := e.s.Revive(e.ctx, cs[0].ID); !errors.Is(err, core.ErrNotDead) {
			e.t.Errorf("Revive(completed) = %v, want ErrNotDead", err)
		}
		avail := e.enqueueOne(e.s, core.ItemSpec{Queue: "finished"})
		if err := e.s.Revive(e.ctx, avail); !errors.Is(err, core.ErrNotDead) {
			e.t.Errorf("Revive(available) = %v, want ErrNotDead", err)
		}
		if err := e.s.Cancel(e.ctx, uuid.Must(uuid.NewV7())); !errors.Is(err, core.ErrNotFound) {
			e.t.Errorf("Cancel(unknown id) = %v, want ErrNotFound", err)
		}
		if err := e.s.Revive(e.ctx, uuid.Must(uuid.NewV7())); !errors.Is(err, core.ErrNotFound) {
			e.t.Errorf("Revive(unknown id) = %v, want ErrNotFound", err)
		}
	})

	e.run("CancelCountsAtBarrier", func(e *env) {
		e.enqueueOne(e.s, core.ItemSpec{Queue: "cb"})
		o := e.owner(e.s)
		b := e.fanOut(e.s, e.claimOne(e.s, o, "cb"), core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "cb-join"}}, kids("cb-k", "k", 2))
		ks := e.children(b.ID)
		c := e.claimOne(e.s, o, "cb-k")
		other := ks[0].ID
		if other == c.ID {
			other = ks[1].ID
		}
		if err := e.s.Cancel(e.ctx, other); err != nil {
			e.t.Fatalf("Cancel(available child): %v", err)
		}
		if got := e.barrier(b.ID); got.Failed != 1 || got.Fired() {
			e.t.Fatalf("after one child cancelled: failed %d, fired %v; want 1, not fired", got.Failed, got.Fired())
		}
		if err := e.s.Cancel(e.ctx, c.ID); err != nil {
			e.t.Fatalf("Cancel(claimed child): %v", err)
		}
		if err := e.s.Cancel(e.ctx, c.ID); err != nil {
			e.t.Fatalf("Cancel(cancelled child): %v", err)
		}
		if got := e.barrier(b.ID); got.Failed != 2 || got.Arrived != 0 || !got.Fired() || e.joinsOf(b.ID) != 1 {
			e.t.Errorf("after both children cancelled (one twice): arrived %d, failed %d, fired %v, %d joins; want 0, 2, fired, 1", got.Arrived, got.Failed, got.Fired(), e.joinsOf(b.ID))
		}
	})

	e.run("ReviveDeadChild", func(e *env) {
		e.enqueueOne(e.s, core.ItemSpec{Queue: "revive"})
		o := e.owner(e.s)
		b := e.fanOut(e.s, e.claimOne(e.s, o, "revive"), core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "revive-join"}}, kids("revive-k", "k", 3))
		cs := e.claimAll(e.s, o, "revive-k", 3)
		if dead, err := e.s.Fail(e.ctx, cs[0], core.FailParams{Error: "bad", Discard: true}); err != nil || !dead {
			e.t.Fatalf("Fail(Discard) = %v, %v", dead, err)
		}
		e.complete(e.s, cs[1], "")
		if got := e.barrier(b.ID); got.Arrived != 1 || got.Failed != 1 || got.Fired() {
			e.t.Fatalf("before Revive: arrived %d, failed %d, fired %v; want 1, 1, not fired", got.Arrived, got.Failed, got.Fired())
		}
		if err := e.s.Revive(e.ctx, cs[0].ID); err != nil {
			e.t.Fatalf("Revive(dead child): %v", err)
		}
		if got := e.barrier(b.ID); got.Failed != 0 || got.Arrived != 1 {
			e.t.Errorf("after Revive: arrived %d, failed %d; want 1, 0", got.Arrived, got.Failed)
		}
		if it := e.get(cs[0].ID); it.State != core.StateAvailable || it.Attempt != 0 || it.CrashCount != 0 || it.BarrierID != b.ID {
			e.t.Errorf("revived child: %s, attempt %d, crashes %d, barrier %s; want available, 0, 0, %s", it.State, it.Attempt, it.CrashCount, it.BarrierID, b.ID)
		}
		if err := e.s.Revive(e.ctx, cs[0].ID); !errors.Is(err, core.ErrNotDead) {
			e.t.Errorf("Revive again = %v, want ErrNotDead", err)
		}
		again := e.claimOne(e.s, o, "revive-k")
		if again.ID != cs[0].ID {
			e.t.Fatalf("claimed %s, want the revived %s", again.ID, cs[0].ID)
		}
		e.complete(e.s, again, "")
		e.complete(e.s, cs[2], "")
		if got := e.barrier(b.ID); got.Arrived != 3 || got.Failed != 0 || !got.Fired() || e.joinsOf(b.ID) != 1 {
			e.t.Errorf("after all arrived: arrived %d, failed %d, fired %v, %d joins; want 3, 0, fired, 1", got.Arrived, got.Failed, got.Fired(), e.joinsOf(b.ID))
		}
	})

	e.run("ReviveAfterFire", func(e *env) {
		e.enqueueOne(e.s, core.ItemSpec{Queue: "late"})
		o := e.owner(e.s)
		b := e.fanOut(e.s, e.claimOne(e.s, o, "late"), core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "late-join"}}, kids("late-k", "k", 1))
		c := e.claimOne(e.s, o, "late-k")
		if dead, err := e.s.Fail(e.ctx, c, core.FailParams{Discard: true}); err != nil || !dead {
			e.t.Fatalf("Fail(Discard) = %v, %v", dead, err)
		}
		fired := e.barrier(b.ID)
		if !fired.Fired() || fired.Failed != 1 {
			e.t.Fatalf("barrier: fired %v, failed %d; want fired, 1", fired.Fired(), fired.Failed)
		}
		if err := e.s.Revive(e.ctx, c.ID); err != nil {
			e.t.Fatalf("Revive: %v", err)
		}
		if it := e.get(c.ID); it.State != core.StateAvailable || it.BarrierID != uuid.Nil {
			e.t.Errorf("child revived after its barrier fired: %s, barrier %s; want available, out of the barrier", it.State, it.BarrierID)
		}
		e.complete(e.s, e.claimOne(e.s, o, "late-k"), "")
		if got := e.barrier(b.ID); got.Failed != 1 || got.Arrived != 0 || e.joinsOf(b.ID) != 1 {
			e.t.Errorf("fired barrier after the revived child completed: arrived %d, failed %d, %d joins; want 0, 1, 1", got.Arrived, got.Failed, e.joinsOf(b.ID))
		}
	})
}
