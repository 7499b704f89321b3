package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// run runs fn as a nested subtest on the same database handle, with tables
// of its own under a new prefix.
func (e *env) run(name string, fn func(e *env)) {
	e.t.Run(name, func(t *testing.T) {
		c := *e
		c.t = e.t.nested(t)
		c.prefix = c.newPrefix()
		c.names = migrations.NamesFor(c.prefix)
		s, err := core.Open(c.ctx, c.db, c.d, core.Options{Prefix: c.prefix, Migrate: true})
		if err != nil {
			c.t.Fatalf("core.Open(prefix %q, Migrate): %v", c.prefix, err)
		}
		c.s = s
		fn(&c)
	})
}

// Guarantee 1: any number of concurrent claimers never hold the same item
// at once, and every item is completed exactly once.
func testClaimExclusive(e *env) {
	const queue = "exclusive"
	const workers = 16
	n := e.scaled(1000, 50)
	specs := make([]core.ItemSpec, n)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: queue, Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i))}
	}
	enqueued := map[uuid.UUID]bool{}
	for _, x := range e.enqueue(e.s, specs...) {
		enqueued[x.ID] = true
	}
	if len(enqueued) != n {
		e.t.Fatalf("Enqueue of %d items gave %d distinct ids", n, len(enqueued))
	}

	var (
		mu     sync.Mutex
		holder = map[uuid.UUID]int{} // item -> worker holding it now
		done   = map[uuid.UUID]int{} // item -> completions
		wg     sync.WaitGroup
		start  = make(chan struct{})
	)
	owners := make([]uuid.UUID, workers)
	for w := range owners {
		owners[w] = e.owner(e.s)
	}
	for w := range workers {
		wg.Go(func() {
			<-start
			rng := rand.New(rand.NewPCG(uint64(w), rand.Uint64()))
			for batch := 0; ; batch++ {
				cs, err := e.s.Claim(e.ctx, core.ClaimParams{Queue: queue, Owner: owners[w], Limit: 1 + rng.IntN(20), Lease: 5 * time.Minute})
				if err != nil {
					e.t.Errorf("worker %d: Claim: %v", w, err)
					return
				}
				if len(cs) == 0 {
					return // items never come back: an empty claim means all are taken
				}
				mu.Lock()
				broken := false
				for _, c := range cs {
					if !enqueued[c.ID] {
						e.t.Errorf("worker %d claimed %s, which was never enqueued", w, c.ID)
						broken = true
					}
					if h, ok := holder[c.ID]; ok {
						e.t.Errorf("worker %d claimed %s while worker %d holds it", w, c.ID, h)
						broken = true
					}
					if done[c.ID] > 0 {
						e.t.Errorf("worker %d claimed %s, which was already completed", w, c.ID)
						broken = true
					}
					holder[c.ID] = w
					if c.State != core.StateClaimed || c.Token == uuid.Nil || c.ClaimToken != c.Token || c.ClaimedBy != owners[w] || c.Owner != owners[w] || c.Attempt != 1 {
						e.t.Errorf("worker %d: claimed item as returned: state %s, token %s/%s, by %s (want %s), attempt %d (want 1)",
							w, c.State, c.Token, c.ClaimToken, c.ClaimedBy, owners[w], c.Attempt)
					}
				}
				mu.Unlock()
				if broken {
					return // the guarantee is broken: stop before looping forever
				}

				if batch%2 == 0 {
					comps := make([]core.Completion, len(cs))
					for i, c := range cs {
						comps[i] = core.Completion{Claim: c, Result: json.RawMessage(fmt.Sprintf(`{"w":%d}`, w))}
					}
					lost, err := e.s.CompleteMany(e.ctx, comps)
					if err != nil || len(lost) > 0 {
						e.t.Errorf("worker %d: CompleteMany(%d) = lost %v, %v; want no loss and no error", w, len(comps), lost, err)
						return
					}
				} else {
					for _, c := range cs {
						if err := e.s.Complete(e.ctx, c, nil); err != nil {
							e.t.Errorf("worker %d: Complete(%s): %v", w, c.ID, err)
							return
						}
					}
				}
				mu.Lock()
				for _, c := range cs {
					delete(holder, c.ID)
					done[c.ID]++
				}
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	if e.t.Failed() {
		return
	}
	if len(done) != n {
		e.t.Errorf("%d distinct items completed, want %d", len(done), n)
	}
	for id, k := range done {
		if k != 1 {
			e.t.Errorf("item %s completed %d times", id, k)
		}
	}
	e.wantCounts(queue, map[core.State]int64{core.StateCompleted: int64(n)})
	e.t.Logf("%d items, %d claimers: %d transaction retries", n, workers, e.s.Stats().Retries)
}

// Guarantee 1: a single claimer takes items lowest priority number first,
// then earliest available_at, then lowest id.
func testClaimOrder(e *env) {
	const queue = "order"
	var specs []core.ItemSpec
	for _, prio := range []int{5, -1, 0} {
		for _, delay := range []time.Duration{3 * time.Hour, 0, time.Hour, 2 * time.Hour} {
			for range 3 {
				specs = append(specs, core.ItemSpec{Queue: queue, Priority: prio, Delay: delay})
			}
		}
	}
	rand.Shuffle(len(specs), func(i, j int) { specs[i], specs[j] = specs[j], specs[i] })
	// Several enqueues, so that id order, available_at order and priority
	// disagree with one another.
	var items []core.Item
	for chunk := range slices.Chunk(specs, 5) {
		for _, x := range e.enqueue(e.s, chunk...) {
			items = append(items, e.get(x.ID))
		}
	}
	slices.SortFunc(items, func(a, b core.Item) int {
		if a.Priority != b.Priority {
			return a.Priority - b.Priority
		}
		if c := a.AvailableAt.Compare(b.AvailableAt); c != 0 {
			return c
		}
		return idLess(a.ID, b.ID)
	})

	// Every item is available 4 h from now: claim there.
	future := e.at(4 * time.Hour)
	owner := e.owner(future)
	pos := 0
	for ; pos < 12; pos++ {
		c := e.claimOne(future, owner, queue)
		if want := items[pos]; c.ID != want.ID {
			got := e.get(c.ID)
			e.t.Fatalf("claim #%d took %s (priority %d, available %v), want %s (priority %d, available %v)",
				pos+1, got.ID, got.Priority, got.AvailableAt, want.ID, want.Priority, want.AvailableAt)
		}
	}
	for pos < len(items) {
		cs := e.claim(future, owner, queue, 4)
		want := items[pos:min(pos+4, len(items))]
		got := ids(cs)
		wantIDs := make([]uuid.UUID, len(want))
		for i, it := range want {
			wantIDs[i] = it.ID
		}
		slices.SortFunc(got, idLess)
		slices.SortFunc(wantIDs, idLess)
		if !slices.Equal(got, wantIDs) {
			e.t.Fatalf("batch claim at position %d took %v, want %v", pos, got, wantIDs)
		}
		pos += len(want)
	}
	if cs := e.claim(future, owner, queue, 10); len(cs) != 0 {
		e.t.Fatalf("claim after every item was taken got %d items", len(cs))
	}

	// The items of one enqueue, of one priority and available at once, are
	// claimed in the order they were given, whatever their keys (the rows
	// are written in key order), and a claim returns them in that order.
	const fifo = "order-fifo"
	var batch []core.ItemSpec
	for i := range 40 {
		batch = append(batch, core.ItemSpec{Queue: fifo, Key: fmt.Sprintf("k%03d", 40-i)})
	}
	var given []uuid.UUID
	for _, x := range e.enqueue(e.s, batch...) {
		given = append(given, x.ID)
	}
	var taken []uuid.UUID
	for len(taken) < len(given) {
		cs := e.claim(e.s, owner, fifo, 7)
		if len(cs) == 0 {
			e.t.Fatalf("claimed %d of %d items, then nothing", len(taken), len(given))
		}
		taken = append(taken, ids(cs)...)
	}
	if !slices.Equal(taken, given) {
		e.t.Fatalf("the items of one enqueue were claimed in the order\n%v\nwant the order given\n%v", taken, given)
	}
}

// Guarantee 1: a claim locks only the rows it takes: two claimers each
// asking for n of 2n available items both get n, even while the other's
// transaction is still open.
func testClaimLocksOnlyRowsItTakes(e *env) {
	const n = 10
	check := func(e *env, queue string, a, b uuid.UUID, ca, cb []core.Claim) {
		e.t.Helper()
		if len(ca) != n || len(cb) != n {
			e.t.Fatalf("claims of %d from %d available items got %d and %d", n, 2*n, len(ca), len(cb))
		}
		seen := map[uuid.UUID]bool{}
		for _, c := range append(slices.Clone(ca), cb...) {
			if seen[c.ID] {
				e.t.Errorf("item %s was claimed by both claimers", c.ID)
			}
			seen[c.ID] = true
		}
		for _, part := range []struct {
			cs    []core.Claim
			owner uuid.UUID
		}{{ca, a}, {cb, b}} {
			for _, c := range part.cs {
				if it := e.get(c.ID); it.State != core.StateClaimed || it.ClaimToken != c.Token || it.ClaimedBy != part.owner {
					e.t.Errorf("item %s after commit: state %s, token %s, by %s; want claimed with %s by %s", c.ID, it.State, it.ClaimToken, it.ClaimedBy, c.Token, part.owner)
				}
			}
		}
		e.wantCounts(queue, map[core.State]int64{core.StateClaimed: 2 * n})
	}
	params := func(queue string, owner uuid.UUID) core.ClaimParams {
		return core.ClaimParams{Queue: queue, Owner: owner, Limit: n, Lease: time.Hour}
	}

	e.run("TwoOpenTransactions", func(e *env) {
		if e.caps.SingleWriter {
			e.t.Skipf("dialect %s runs one write transaction at a time (Capabilities.SingleWriter): two open claim transactions cannot coexist; OneAfterTheOther covers it", e.d.Name())
		}
		const queue = "locks-open"
		e.enqueue(e.s, make2n(queue, n)...)
		a, b := e.owner(e.s), e.owner(e.s)
		txA, err := e.s.Begin(e.ctx)
		if err != nil {
			e.t.Fatalf("Begin A: %v", err)
		}
		defer txA.Rollback()
		ca, err := e.s.ClaimTx(e.ctx, txA, params(queue, a))
		if err != nil {
			e.t.Fatalf("ClaimTx A: %v", err)
		}
		// B must not wait for A's rows: a short deadline turns waiting into a
		// failure.
		ctxB, cancel := context.WithTimeout(e.ctx, 5*time.Second)
		defer cancel()
		txB, err := e.s.Begin(ctxB)
		if err != nil {
			e.t.Fatalf("Begin B while A's claim transaction is open: %v", err)
		}
		defer txB.Rollback()
		cb, err := e.s.ClaimTx(ctxB, txB, params(queue, b))
		if err != nil {
			e.t.Fatalf("ClaimTx B while A's claim transaction is open (did it wait on A's rows?): %v", err)
		}
		if len(cb) != n {
			e.t.Fatalf("ClaimTx B while A holds %d of %d rows got %d, want %d: the claim locked rows it did not take", len(ca), 2*n, len(cb), n)
		}
		if err := txB.Commit(); err != nil {
			e.t.Fatalf("commit B: %v", err)
		}
		if err := txA.Commit(); err != nil {
			if e.d.Classify(err) != dialect.Retryable {
				e.t.Fatalf("commit A: %v", err)
			}
			// A serializable database may abort one of two overlapping
			// claim transactions at commit, after neither waited; Claim
			// would run it again, as this does.
			e.t.Logf("commit A: %v: a retryable error, so A claims again", err)
			if ca, err = e.s.Claim(e.ctx, params(queue, a)); err != nil {
				e.t.Fatalf("Claim A again: %v", err)
			}
		}
		check(e, queue, a, b, ca, cb)
	})

	e.run("OneAfterTheOther", func(e *env) {
		const queue = "locks-seq"
		e.enqueue(e.s, make2n(queue, n)...)
		a, b := e.owner(e.s), e.owner(e.s)
		claimTx := func(owner uuid.UUID) []core.Claim {
			tx, err := e.s.Begin(e.ctx)
			if err != nil {
				e.t.Fatalf("Begin: %v", err)
			}
			defer tx.Rollback()
			cs, err := e.s.ClaimTx(e.ctx, tx, params(queue, owner))
			if err != nil {
				e.t.Fatalf("ClaimTx: %v", err)
			}
			if err := tx.Commit(); err != nil {
				e.t.Fatalf("Commit: %v", err)
			}
			return cs
		}
		ca := claimTx(a)
		cb := claimTx(b)
		check(e, queue, a, b, ca, cb)
	})
}

func make2n(queue string, n int) []core.ItemSpec {
	specs := make([]core.ItemSpec, 2*n)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: queue}
	}
	return specs
}
