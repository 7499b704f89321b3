package conformance

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// live is the usual KeyStates: a key held until its item finishes.
var live = []core.State{core.StateAvailable, core.StateClaimed}

// Unique by state (ItemSpec.KeyStates): a key is taken from a holder
// outside the enqueue's states, on every enqueue path, and kept from one
// inside them; the released holder keeps its key in the reserved form,
// so that reviving it collides with nothing, while a holder revived with
// its key keeps it; retention frees a key as before.
func testKeyStates(e *env) {
	e.run("Paths", func(e *env) {
		const queue = "ks"
		o := e.owner(e.s)
		first := e.enqueueOne(e.s, core.ItemSpec{Queue: queue, Key: "k"})
		if r := e.enqueue(e.s, core.ItemSpec{Queue: queue, Key: "k", KeyStates: live})[0]; !r.Existed || r.ID != first {
			e.t.Fatalf("KeyStates live, holder available: %+v, want %s existed", r, first)
		}
		c := e.claimOne(e.s, o, queue)
		if r := e.enqueue(e.s, core.ItemSpec{Queue: queue, Key: "k", KeyStates: live})[0]; !r.Existed || r.ID != first {
			e.t.Fatalf("KeyStates live, holder claimed: %+v, want %s existed", r, first)
		}
		e.complete(e.s, c, "")
		if r := e.enqueue(e.s, core.ItemSpec{Queue: queue, Key: "k"})[0]; !r.Existed || r.ID != first {
			e.t.Fatalf("no KeyStates, holder completed: %+v, want %s existed (held while it exists)", r, first)
		}
		second := e.enqueue(e.s, core.ItemSpec{Queue: queue, Key: "k", KeyStates: live})[0]
		if second.Existed || second.ID == first {
			e.t.Fatalf("KeyStates live, holder completed: %+v, want a new item", second)
		}
		if got, want := e.get(first).Key, core.ReleasedKey(first, "k"); got != want {
			e.t.Errorf("released holder's key = %q, want %q", got, want)
		}
		if got := e.get(second.ID).Key; got != "k" {
			e.t.Errorf("new holder's key = %q, want k", got)
		}
		// Bulk: one statement with keys held, released and new, and the
		// same key twice.
		c2 := e.claimOne(e.s, o, queue) // second
		e.complete(e.s, c2, "")
		held := e.enqueueOne(e.s, core.ItemSpec{Queue: queue, Key: "h"})
		many := e.enqueue(e.s,
			core.ItemSpec{Queue: queue, Key: "new", KeyStates: live},
			core.ItemSpec{Queue: queue, Key: "k", KeyStates: live},
			core.ItemSpec{Queue: queue, Key: "h", KeyStates: live},
			core.ItemSpec{Queue: queue, Key: "k", KeyStates: live},
			core.ItemSpec{Queue: queue, Key: "late", KeyStates: live, Delay: time.Hour},
		)
		if many[0].Existed || many[1].Existed || many[1].ID == second.ID || !many[2].Existed || many[2].ID != held ||
			!many[3].Existed || many[3].ID != many[1].ID || many[4].Existed {
			e.t.Errorf("bulk enqueue = %+v; want new, new (k released by %s), %s existed, the new k again, new", many, second.ID, held)
		}
		// EnqueueTx and Fenced.Enqueue share the path.
		for _, c := range e.claim(e.s, o, queue, 10) {
			if c.ID == many[1].ID {
				e.complete(e.s, c, "")
			}
		}
		if it := e.get(many[1].ID); it.State != core.StateCompleted {
			e.t.Fatalf("new holder of k is %s, want completed", it.State)
		}
		tx, err := e.s.Begin(e.ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		viaTx, err := e.s.EnqueueTx(e.ctx, tx, core.ItemSpec{Queue: queue, Key: "k", KeyStates: live})
		if err != nil {
			_ = tx.Rollback()
			e.t.Fatalf("EnqueueTx: %v", err)
		}
		if err := tx.Commit(); err != nil {
			e.t.Fatal(err)
		}
		if viaTx[0].Existed {
			e.t.Errorf("EnqueueTx after the holder completed: %+v, want a new item", viaTx[0])
		}
		e.enqueueOne(e.s, core.ItemSpec{Queue: "ks-fence"})
		fc := e.claimOne(e.s, o, "ks-fence")
		var viaFence []core.EnqueueResult
		if held, err := e.s.Fence(e.ctx, fc, func(ctx context.Context, f *core.Fenced) error {
			var err error
			viaFence, err = f.Enqueue(ctx, core.ItemSpec{Queue: queue, Key: "k", KeyStates: []core.State{core.StateClaimed}})
			return err
		}); !held || err != nil {
			e.t.Fatalf("Fenced.Enqueue: held %v, %v", held, err)
		}
		if viaFence[0].Existed || viaFence[0].ID == viaTx[0].ID {
			e.t.Errorf("Fenced.Enqueue, KeyStates claimed, holder available: %+v, want a new item", viaFence[0])
		}
		// Fenced.Then: a held key is a conflict, unless KeyStates release it.
		e.enqueueOne(e.s, core.ItemSpec{Queue: "ks-then"})
		tc := e.claimOne(e.s, o, "ks-then")
		if held, err := e.s.Fence(e.ctx, tc, func(ctx context.Context, f *core.Fenced) error {
			_, err := f.Then(ctx, core.ItemSpec{Queue: queue, Key: "k"}, nil)
			return err
		}); !held || !errors.Is(err, core.ErrKeyConflict) {
			e.t.Errorf("Then with a held key: held %v, %v; want ErrKeyConflict", held, err)
		}
		var viaThen core.EnqueueResult
		if held, err := e.s.Fence(e.ctx, tc, func(ctx context.Context, f *core.Fenced) error {
			var err error
			viaThen, err = f.Then(ctx, core.ItemSpec{Queue: queue, Key: "k", KeyStates: []core.State{core.StateClaimed}}, nil)
			return err
		}); !held || err != nil {
			e.t.Fatalf("Then, KeyStates claimed, holder available: held %v, %v", held, err)
		}
		if viaThen.Existed || viaThen.ID == viaFence[0].ID {
			e.t.Errorf("Then, KeyStates claimed, holder available: %+v, want a new item", viaThen)
		}
		if n := e.sqlCount("SELECT COUNT(*) FROM {items} WHERE queue = ? AND unique_key = ?", queue, "k"); n != 1 {
			e.t.Errorf("%d items hold key k, want 1", n)
		}
	})

	e.run("ReviveAndRetention", func(e *env) {
		const queue = "ksr"
		o := e.owner(e.s)
		kill := func(id uuid.UUID) {
			e.t.Helper()
			c := e.claimOne(e.s, o, queue)
			if c.ID != id {
				e.t.Fatalf("claimed %s, want %s", c.ID, id)
			}
			if _, err := e.s.Fail(e.ctx, c, core.FailParams{Error: "x", Discard: true}); err != nil {
				e.t.Fatalf("Fail: %v", err)
			}
		}
		// Revived with its key: it keeps it.
		a := e.enqueueOne(e.s, core.ItemSpec{Queue: queue, Key: "k"})
		kill(a)
		if err := e.s.Revive(e.ctx, a); err != nil {
			e.t.Fatalf("Revive: %v", err)
		}
		if r := e.enqueue(e.s, core.ItemSpec{Queue: queue, Key: "k", KeyStates: live})[0]; !r.Existed || r.ID != a {
			e.t.Errorf("after reviving the holder: %+v, want %s existed", r, a)
		}
		// Released, then revived: no collision, and the key stays with the
		// new holder.
		kill(a)
		b := e.enqueue(e.s, core.ItemSpec{Queue: queue, Key: "k", KeyStates: live})[0]
		if b.Existed {
			e.t.Fatalf("dead holder, KeyStates live: %+v, want a new item", b)
		}
		if err := e.s.Revive(e.ctx, a); err != nil {
			e.t.Fatalf("Revive of the released item: %v", err)
		}
		if it := e.get(a); it.State != core.StateAvailable || it.Key != core.ReleasedKey(a, "k") {
			e.t.Errorf("revived released item: %s with key %q, want available with %q", it.State, it.Key, core.ReleasedKey(a, "k"))
		}
		if r := e.enqueue(e.s, core.ItemSpec{Queue: queue, Key: "k"})[0]; !r.Existed || r.ID != b.ID {
			e.t.Errorf("after reviving the released item: %+v, want the new holder %s", r, b.ID)
		}
		// Retention: deleting the released item touches nothing else;
		// deleting the holder frees the key even without KeyStates.
		for range 2 {
			c := e.claimOne(e.s, o, queue)
			e.complete(e.s, c, "")
		}
		later := e.at(2 * time.Hour)
		if r, err := later.Purge(e.ctx, core.PurgeParams{OlderThan: time.Hour}); err != nil || r.Items != 2 {
			e.t.Fatalf("Purge: %+v, %v; want 2 items", r, err)
		}
		if r := e.enqueue(e.s, core.ItemSpec{Queue: queue, Key: "k"})[0]; r.Existed {
			e.t.Errorf("after the holder was purged: %+v, want a new item", r)
		}
	})

	e.run("OneWinnerUnderConcurrency", testKeyStatesConcurrent)
}

// testKeyStatesConcurrent has many goroutines enqueue the same keys, each
// call both keys in either order, while their holders finish: every
// goroutine sees the holders until they finish, then exactly one new item
// per key, and no key is held twice.
func testKeyStatesConcurrent(e *env) {
	const queue = "ksc"
	goroutines := e.scaled(16, 4)
	o := e.owner(e.s)
	keys := []string{"a", "b"}
	var holders []uuid.UUID
	for _, k := range keys {
		holders = append(holders, e.enqueueOne(e.s, core.ItemSpec{Queue: queue, Key: k}))
	}
	cs := e.claimAll(e.s, o, queue, len(keys))
	var (
		wg      sync.WaitGroup
		started sync.WaitGroup
		mu      sync.Mutex
		winners = map[string]map[uuid.UUID]int{}
	)
	for _, k := range keys {
		winners[k] = map[uuid.UUID]int{}
	}
	started.Add(goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			once := sync.OnceFunc(started.Done)
			defer once()
			done := map[string]bool{}
			for len(done) < len(keys) && e.ctx.Err() == nil {
				specs := []core.ItemSpec{{Queue: queue, Key: keys[0], KeyStates: live}, {Queue: queue, Key: keys[1], KeyStates: live}}
				if (g+rand.IntN(2))%2 == 1 {
					specs[0], specs[1] = specs[1], specs[0]
				}
				rs, err := e.s.Enqueue(e.ctx, specs...)
				once()
				if err != nil {
					e.t.Errorf("goroutine %d: Enqueue: %v", g, err)
					return
				}
				for i, r := range rs {
					k := specs[i].Key
					if holder := holders[slicesIndex(keys, k)]; r.ID == holder || done[k] {
						continue
					}
					done[k] = true
					mu.Lock()
					winners[k][r.ID]++
					mu.Unlock()
				}
			}
		}()
	}
	started.Wait() // every goroutine has enqueued once, against the live holders
	if _, err := e.s.CompleteMany(e.ctx, []core.Completion{{Claim: cs[0]}, {Claim: cs[1]}}); err != nil {
		e.t.Fatalf("CompleteMany: %v", err)
	}
	wg.Wait()
	for _, k := range keys {
		if len(winners[k]) != 1 {
			e.t.Errorf("key %s: new items %v, want exactly one seen by all %d goroutines", k, winners[k], goroutines)
		}
		if n := e.sqlCount("SELECT COUNT(*) FROM {items} WHERE queue = ? AND unique_key = ?", queue, k); n != 1 {
			e.t.Errorf("%d items hold key %s, want 1", n, k)
		}
	}
	e.wantCounts(queue, map[core.State]int64{core.StateCompleted: 2, core.StateAvailable: 2})
	// Where conflicting transactions wait instead of aborting, the releases
	// (in key order, into the gap after the key) deadlock with nothing.
	if n := e.s.Stats().Retries; n > 0 && e.caps.RetryAttempts == 0 {
		e.t.Errorf("%d transactions retried: the enqueues deadlocked", n)
	}
}

func slicesIndex(xs []string, x string) int {
	for i, v := range xs {
		if v == x {
			return i
		}
	}
	return -1
}
