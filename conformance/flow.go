package conformance

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
)

// Flow control: the items of one flow key of a queue form a lane, whose
// limits every claim of every process keeps (Limit).

// flowSpecs returns n items of queue for each of keys, key by key.
func flowSpecs(queue string, keys []string, n int) []core.ItemSpec {
	var specs []core.ItemSpec
	for _, k := range keys {
		for range n {
			specs = append(specs, core.ItemSpec{Queue: queue, FlowKey: k})
		}
	}
	return specs
}

func flowKeys(n int) []string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("tenant-%03d", i)
	}
	return keys
}

// Many claimers on many keys under a concurrency limit: at no instant
// are more than the limit of a key's items claimed, whether counted by
// the claimers (each claim counted from its return until its completion
// begins) or read from the items table while they run; every item runs
// once, with a start and an end written inside fences; and the limit
// does not starve anything.
func testFlowConcurrencyLimit(e *env) {
	const queue, limit = "flow", 3
	claimers, keys, pause := 64, flowKeys(e.scaled(100, 20)), time.Duration(0)
	if e.caps.RetryAttempts > 0 {
		// Serializable transactions (the cockroach dialect, and its
		// stand-in on PostgreSQL, whose SSI aborts far more and runs out
		// of the memory it tracks conflicts in): 64 claimers of a few
		// hundred lanes spend the run rolling back each other's claims.
		// Eight claimers of 50 lanes, sampled less often, still race on
		// every lane.
		claimers, keys, pause = 8, flowKeys(e.scaled(50, 20)), 10*time.Millisecond
	}
	perKey := 5 // more than the limit, so that claims meet full lanes
	if err := e.s.SetLimit(e.ctx, core.Limit{Queue: queue, Concurrency: limit}); err != nil {
		e.t.Fatalf("SetLimit: %v", err)
	}
	n := len(keys) * perKey
	e.enqueue(e.s, flowSpecs(queue, keys, perKey)...)
	audit := e.sideTable()
	insert := e.sideInsert(audit)

	var (
		mu      sync.Mutex
		running = map[string]int{}
		most    int
		done    = map[uuid.UUID]int{}
		wg      sync.WaitGroup
		stop    = make(chan struct{})
	)
	// The database's own view, sampled while the claimers run.
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			rows, err := e.db.QueryContext(e.ctx, e.d.Rebind("SELECT flow_key, COUNT(*) FROM "+e.names.Items+" WHERE queue = ? AND state = 'claimed' GROUP BY flow_key"), queue)
			if err != nil && e.d.Classify(err) == dialect.Retryable {
				continue // a serializable read aborted: sample again
			}
			if err != nil {
				e.t.Errorf("sample claimed items: %v", err)
				return
			}
			for rows.Next() {
				var key string
				var c int
				if err := rows.Scan(&key, &c); err != nil {
					e.t.Errorf("sample: %v", err)
				}
				if c > limit {
					e.t.Errorf("the items table holds %d claimed items of key %s at once, limit %d", c, key, limit)
				}
			}
			rows.Close()
			time.Sleep(pause)
		}
	})
	// A claimer gives up when no item has been done for three minutes: a
	// guard against items lost for ever, not a bound on a slow machine,
	// where the work goes on, only slower.
	progress := time.Now()
	var work sync.WaitGroup
	for w := range claimers {
		owner := e.owner(e.s)
		work.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), rand.Uint64()))
			for {
				cs, err := e.s.Claim(e.ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: 1 + rng.IntN(8), Lease: 5 * time.Minute})
				if err != nil {
					e.t.Errorf("claimer %d: Claim: %v", w, err)
					return
				}
				mu.Lock()
				finished, doneNow, stalled := len(done) == n, len(done), time.Since(progress) > 3*time.Minute
				for _, c := range cs {
					running[c.FlowKey]++
					most = max(most, running[c.FlowKey])
					if running[c.FlowKey] > limit {
						e.t.Errorf("claimer %d: %d items of key %s claimed at once, limit %d", w, running[c.FlowKey], c.FlowKey, limit)
					}
				}
				mu.Unlock()
				if len(cs) == 0 {
					if finished {
						return
					}
					if stalled {
						e.t.Errorf("claimer %d: %d of %d items done, and none for three minutes", w, doneNow, n)
						return
					}
					time.Sleep(time.Duration(1+rng.IntN(5)) * time.Millisecond) // others hold the rest
					continue
				}
				for _, c := range cs {
					if _, err := e.s.Fence(e.ctx, c, func(ctx context.Context, f *core.Fenced) error {
						_, err := f.ExecContext(ctx, insert, c.ID.String()+"/start")
						return err
					}); err != nil {
						e.t.Errorf("start fence: %v", err)
						return
					}
				}
				mu.Lock()
				for _, c := range cs {
					running[c.FlowKey]--
				}
				mu.Unlock()
				for _, c := range cs {
					held, err := e.s.Fence(e.ctx, c, func(ctx context.Context, f *core.Fenced) error {
						if _, err := f.ExecContext(ctx, insert, c.ID.String()+"/end"); err != nil {
							return err
						}
						return f.Complete(ctx, nil)
					})
					if err != nil || !held {
						e.t.Errorf("end fence: held %v, %v", held, err)
						return
					}
					mu.Lock()
					done[c.ID]++
					progress = time.Now()
					mu.Unlock()
				}
			}
		})
	}
	work.Wait()
	close(stop)
	wg.Wait()
	if e.t.Failed() {
		return
	}
	if len(done) != n {
		e.t.Fatalf("%d items completed, want %d", len(done), n)
	}
	for id, k := range done {
		if k != 1 {
			e.t.Errorf("item %s completed %d times", id, k)
		}
	}
	if got := e.sideCount(audit); got != int64(2*n) {
		e.t.Errorf("audit holds %d rows, want a start and an end for each of %d items", got, n)
	}
	if most < 2 {
		e.t.Errorf("at most %d items of one key ran at once: the limit of %d was never approached", most, limit)
	}
}

// A per-process limit caps what one owner holds of a key; another owner
// takes more, up to the key's concurrency limit.
func testFlowPerProcess(e *env) {
	const queue = "flow-pp"
	if err := e.s.SetLimit(e.ctx, core.Limit{Queue: queue, Concurrency: 3, PerProcess: 2}); err != nil {
		e.t.Fatalf("SetLimit: %v", err)
	}
	e.enqueue(e.s, flowSpecs(queue, []string{"a", "b"}, 5)...)
	a, b := e.owner(e.s), e.owner(e.s)
	count := func(cs []core.Claim) map[string]int {
		m := map[string]int{}
		for _, c := range cs {
			m[c.FlowKey]++
		}
		return m
	}
	first := count(e.claim(e.s, a, queue, 10))
	again := count(e.claim(e.s, a, queue, 10))
	second := count(e.claim(e.s, b, queue, 10))
	if first["a"] != 2 || first["b"] != 2 || len(again) != 0 {
		e.t.Errorf("one owner claimed %v then %v, want 2 of each key then nothing", first, again)
	}
	if second["a"] != 1 || second["b"] != 1 {
		e.t.Errorf("a second owner claimed %v, want 1 of each key (the concurrency limit of 3)", second)
	}
}

// A rate limit of Rate per Per with a burst: in any window of length Per
// on the database clock, at most Rate + Burst claims of the key, however
// many claimers ask; an item held back uses no attempt, and is claimed
// once the rate allows.
func testFlowRateLimit(e *env) {
	const queue = "flow-rate"
	const rate, burst = 4, 2
	per := 400 * time.Millisecond
	n := e.scaled(14, 10)
	if err := e.s.SetLimit(e.ctx, core.Limit{Queue: queue, Key: "k", Rate: rate, Per: per, Burst: burst}); err != nil {
		e.t.Fatalf("SetLimit: %v", err)
	}
	e.enqueue(e.s, flowSpecs(queue, []string{"k"}, n)...)
	var (
		mu      sync.Mutex
		claimed []core.Claim
		wg      sync.WaitGroup
	)
	deadline := time.Now().Add(time.Duration(n) * per * 10)
	for w := range 4 {
		owner := e.owner(e.s)
		wg.Go(func() {
			for {
				mu.Lock()
				left := len(claimed) < n
				mu.Unlock()
				if !left || time.Now().After(deadline) {
					return
				}
				cs, err := e.s.Claim(e.ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: 5, Lease: time.Minute})
				if err != nil {
					e.t.Errorf("claimer %d: %v", w, err)
					return
				}
				mu.Lock()
				claimed = append(claimed, cs...)
				mu.Unlock()
				if len(cs) == 0 {
					time.Sleep(per / 20) // a worker waits for NextClaimAt; this polls
				}
			}
		})
	}
	wg.Wait()
	if len(claimed) != n {
		e.t.Fatalf("claimed %d of %d items before the deadline", len(claimed), n)
	}
	at := make([]time.Time, len(claimed))
	for i, c := range claimed {
		if c.Attempt != 1 {
			e.t.Errorf("item %s claimed at attempt %d: a claim held back used an attempt", c.ID, c.Attempt)
		}
		at[i] = c.ClaimedAt
	}
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	for i := range at {
		in := 0
		for j := i; j < len(at) && at[j].Sub(at[i]) < per; j++ {
			in++
		}
		if in > rate+burst {
			e.t.Errorf("%d claims in the window of %v from %v, want at most %d", in, per, at[i], rate+burst)
		}
	}
	// Past the burst, one claim per Per / Rate at most.
	if span, least := at[len(at)-1].Sub(at[0]), time.Duration(n-burst)*per/rate-per/rate; span < least {
		e.t.Errorf("%d claims spanned %v on the database clock, want at least %v", n, span, least)
	}
}

// Two keys of equal weight, one with many items enqueued first and one
// with a few after: each claim gives the small key at least half of its
// places while it has items, and all of them within ceil(2 × small /
// batch) + 1 claims.
func testFlowFairShares(e *env) {
	const queue, batch, small = "flow-fair", 20, 100
	big := e.scaled(1000, 400)
	if err := e.s.SetLimit(e.ctx, core.Limit{Queue: queue}); err != nil {
		e.t.Fatalf("SetLimit: %v", err)
	}
	e.enqueue(e.s, flowSpecs(queue, []string{"big"}, big)...)
	e.enqueue(e.s, flowSpecs(queue, []string{"small"}, small)...)
	owner := e.owner(e.s)
	got, claims := 0, 0
	for got < small {
		cs := e.claim(e.s, owner, queue, batch)
		claims++
		n := 0
		for _, c := range cs {
			if c.FlowKey == "small" {
				n++
			}
			e.complete(e.s, c, "")
		}
		if want := min(batch/2, small-got); n < want {
			e.t.Errorf("claim %d gave the small key %d of %d places, want at least %d", claims, n, len(cs), want)
		}
		got += n
		if most := (2*small+batch-1)/batch + 1; claims > most {
			e.t.Fatalf("the small key's %d items took more than %d claims (%d so far)", small, most, got)
		}
	}
}

// A limit changed while items wait applies at the next claim.
func testFlowLimitChange(e *env) {
	const queue = "flow-change"
	if err := e.s.SetLimit(e.ctx, core.Limit{Queue: queue, Concurrency: 1}); err != nil {
		e.t.Fatalf("SetLimit: %v", err)
	}
	e.enqueue(e.s, flowSpecs(queue, []string{"k"}, 5)...)
	owner := e.owner(e.s)
	if cs := e.claim(e.s, owner, queue, 5); len(cs) != 1 {
		e.t.Fatalf("claimed %d under a limit of 1", len(cs))
	}
	if err := e.s.SetLimit(e.ctx, core.Limit{Queue: queue, Key: "k", Concurrency: 3}); err != nil {
		e.t.Fatalf("SetLimit of the key: %v", err)
	}
	if cs := e.claim(e.s, owner, queue, 5); len(cs) != 2 {
		e.t.Fatalf("claimed %d more once the key's limit became 3, want 2", len(cs))
	}
	if err := e.s.DeleteLimit(e.ctx, queue, "k"); err != nil {
		e.t.Fatalf("DeleteLimit: %v", err)
	}
	if err := e.s.DeleteLimit(e.ctx, queue, ""); err != nil {
		e.t.Fatalf("DeleteLimit of the default: %v", err)
	}
	if cs := e.claim(e.s, owner, queue, 5); len(cs) != 2 {
		e.t.Fatalf("claimed %d once no limit was left, want the last 2", len(cs))
	}
	if ls, err := e.s.Limits(e.ctx, queue); err != nil || len(ls) != 0 {
		e.t.Fatalf("Limits after both were deleted = %v, %v", ls, err)
	}
}

// Whatever ends a claim of a keyed item frees its place under the key's
// limit, exactly once: after each way of ending the one claim a limit of
// 1 allows, the next claim takes exactly one item of the key.
func testFlowEveryEndFreesOnePlace(e *env) {
	const queue = "flow-ends"
	if err := e.s.SetLimit(e.ctx, core.Limit{Queue: queue, Concurrency: 1}); err != nil {
		e.t.Fatalf("SetLimit: %v", err)
	}
	e.enqueue(e.s, flowSpecs(queue, []string{"k"}, 12)...)
	owner := e.owner(e.s)
	one := func(s *core.Store, owner uuid.UUID, after string) core.Claim {
		e.t.Helper()
		cs := e.claim(s, owner, queue, 5)
		if len(cs) != 1 {
			e.t.Fatalf("after %s: claimed %d items of the key, want 1", after, len(cs))
		}
		return cs[0]
	}
	ends := []struct {
		name string
		end  func(c core.Claim) error
	}{
		{"Complete", func(c core.Claim) error { return e.s.Complete(e.ctx, c, nil) }},
		{"CompleteMany", func(c core.Claim) error {
			_, err := e.s.CompleteMany(e.ctx, []core.Completion{{Claim: c}})
			return err
		}},
		{"Fail (retry)", func(c core.Claim) error {
			_, err := e.s.Fail(e.ctx, c, core.FailParams{Error: "again", RetryIn: time.Hour})
			return err
		}},
		{"Fail (dead)", func(c core.Claim) error {
			_, err := e.s.Fail(e.ctx, c, core.FailParams{Error: "dead", Discard: true})
			return err
		}},
		{"Release", func(c core.Claim) error { return e.s.Release(e.ctx, c, time.Hour) }},
		{"Cancel", func(c core.Claim) error { return e.s.Cancel(e.ctx, c.ID) }},
		{"Fenced.Complete", func(c core.Claim) error {
			_, err := e.s.Fence(e.ctx, c, func(ctx context.Context, f *core.Fenced) error { return f.Complete(ctx, nil) })
			return err
		}},
	}
	c := one(e.s, owner, "the first claim")
	for _, x := range ends {
		if cs := e.claim(e.s, owner, queue, 5); len(cs) != 0 {
			e.t.Fatalf("before %s: claimed %d more over the limit", x.name, len(cs))
		}
		if err := x.end(c); err != nil {
			e.t.Fatalf("%s: %v", x.name, err)
		}
		c = one(e.s, owner, x.name)
	}
	// An owner that leaves gives its claims back.
	if err := e.s.Deregister(e.ctx, owner); err != nil {
		e.t.Fatalf("Deregister: %v", err)
	}
	other := e.owner(e.s)
	c = one(e.s, other, "Deregister")
	// An owner that dies: the reaper releases its claims.
	reaper := e.at(2 * time.Hour)
	if _, err := reaper.Reap(e.ctx, core.ReapParams{StaleAfter: time.Hour}); err != nil {
		e.t.Fatalf("Reap: %v", err)
	}
	one(e.s, e.owner(e.s), "the reaper released a dead owner's claim")
	_ = c
}

// A keyed item revived after its lane went idle is claimed: revive gives
// its lane its turn back.
func testFlowReviveWakesLane(e *env) {
	const queue = "flow-revive"
	id := e.enqueueOne(e.s, core.ItemSpec{Queue: queue, FlowKey: "k", MaxAttempts: 1})
	owner := e.owner(e.s)
	c := e.claimOne(e.s, owner, queue)
	if dead, err := e.s.Fail(e.ctx, c, core.FailParams{Error: "boom"}); err != nil || !dead {
		e.t.Fatalf("Fail = %v, %v; want dead", dead, err)
	}
	if cs := e.claim(e.s, owner, queue, 5); len(cs) != 0 {
		e.t.Fatalf("claimed %d of a lane with only a dead item", len(cs))
	}
	if err := e.s.Revive(e.ctx, id); err != nil {
		e.t.Fatalf("Revive: %v", err)
	}
	if cs := e.claim(e.s, owner, queue, 5); len(cs) != 1 || cs[0].ID != id {
		e.t.Fatalf("after Revive claimed %v, want the revived item", cs)
	}
}

// Keyed and unkeyed items share a queue: one claim takes both, and
// only the keyed ones are limited.
func testFlowMixedQueue(e *env) {
	const queue = "flow-mixed"
	if err := e.s.SetLimit(e.ctx, core.Limit{Queue: queue, Concurrency: 1}); err != nil {
		e.t.Fatalf("SetLimit: %v", err)
	}
	e.enqueue(e.s, flowSpecs(queue, []string{"k"}, 3)...)
	e.enqueue(e.s, core.ItemSpec{Queue: queue}, core.ItemSpec{Queue: queue}, core.ItemSpec{Queue: queue})
	cs := e.claim(e.s, e.owner(e.s), queue, 10)
	keyed := 0
	for _, c := range cs {
		if c.FlowKey != "" {
			keyed++
		}
	}
	if len(cs) != 4 || keyed != 1 {
		e.t.Fatalf("claimed %d items, %d keyed; want the 3 unkeyed and 1 keyed", len(cs), keyed)
	}
}
