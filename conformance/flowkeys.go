package conformance

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/fault"
)

// A queue whose keys have no limits is claimed key by key, without its
// lanes' rows, where the database can step through keys
// (Capabilities.RecursiveScan): ten keys of three items each, claimed
// ten at a time (every other claim with attempt limits for a kind, whose
// claim reads the keys' items first and claims those chosen), leave
// every lane's turn as their enqueue set it. A claim that took or wrote
// the lanes moved each turn (to the claim's time, or none once the lane
// ran dry).
func testFlowKeysWithoutLimitsTakeNoLane(e *env) {
	if !e.caps.RecursiveScan {
		e.t.Skipf("dialect %s does not step through keys (Capabilities.RecursiveScan): its claims take lanes", e.d.Name())
	}
	const queue, keys, per = "flow-keys", 10, 3
	e.enqueue(e.s, flowSpecs(queue, flowKeys(keys), per)...)
	turns := map[string]time.Time{}
	for _, k := range flowKeys(keys) {
		turns[k] = e.laneTurn(queue, k)
	}
	owner := e.owner(e.s)
	got := map[string]int{}
	for claims, total := 0, 0; total < keys*per; claims++ {
		p := core.ClaimParams{Queue: queue, Owner: owner, Limit: 10, Lease: time.Hour}
		if claims%2 == 1 {
			p.MaxAttempts = map[string]int{"another-kind": 3}
		}
		cs, err := e.s.Claim(e.ctx, p)
		if err != nil {
			e.t.Fatalf("Claim: %v", err)
		}
		if len(cs) == 0 {
			e.t.Fatalf("claimed %d of %d, then nothing", total, keys*per)
		}
		for _, c := range cs {
			got[c.FlowKey]++
		}
		total += len(cs)
	}
	for _, k := range flowKeys(keys) {
		if got[k] != per {
			e.t.Errorf("key %s: %d claimed, want %d", k, got[k], per)
		}
		if at := e.laneTurn(queue, k); !at.Equal(turns[k]) {
			e.t.Errorf("key %s: the lane's turn moved from %v to %v: a claim wrote the lane", k, turns[k], at)
		}
	}
}

// A key whose weight fills a claim on its own takes every other claim,
// not every claim: the next claim begins with the keys the last one
// passed over. Claims of 4 over a key of weight 5 and one of weight 1.
func testFlowKeysWeightDoesNotStarve(e *env) {
	const queue = "flow-keys-weight"
	if err := e.s.SetLimit(e.ctx, core.Limit{Queue: queue, Key: "heavy", Weight: 5}); err != nil {
		e.t.Fatalf("SetLimit: %v", err)
	}
	e.enqueue(e.s, flowSpecs(queue, []string{"heavy", "light"}, 20)...)
	owner := e.owner(e.s)
	passed, heavy, light := 0, 0, 0
	for i := range 6 {
		got := map[string]int{}
		for _, c := range e.claim(e.s, owner, queue, 4) {
			got[c.FlowKey]++
		}
		heavy, light = heavy+got["heavy"], light+got["light"]
		if got["light"] > 0 {
			passed = 0
			continue
		}
		if passed++; passed > 1 {
			e.t.Errorf("claim %d passed over the light key again (%v)", i+1, got)
		}
	}
	if heavy <= light || light == 0 {
		e.t.Errorf("six claims took %d of the heavy key, %d of the light: want both, the heavy more", heavy, light)
	}
}

// Claims of keys that run at once take different keys: a claim moves its
// store's place in the queue's keys past the keys it read before it
// claims their items, so that the claims begun beside it read the next
// keys, not the same keys' items, which it holds and they would pass
// over. Twelve keys of five items; three claims of 20, the second begun
// while the first holds its keys' items, the third while both do: each
// must take 20, of keys no other took.
func testFlowKeysClaimsAtOnceTakeOtherKeys(e *env) {
	if e.caps.SingleWriter {
		e.t.Skipf("dialect %s runs one write transaction at a time (Capabilities.SingleWriter): no two claims hold items at once", e.d.Name())
	}
	if !e.caps.RecursiveScan {
		e.t.Skipf("dialect %s does not step through keys (Capabilities.RecursiveScan): Flow_ClaimsAtOnceShareTheLanes covers its claims", e.d.Name())
	}
	const queue, keys, per, n = "flow-keys-share", 12, 5, 20
	e.enqueue(e.s, flowSpecs(queue, flowKeys(keys), per)...)
	owner := e.owner(e.s)
	var claims [][]core.Claim // innermost first
	var ctx context.Context
	calls := 0
	claim := func(ctx context.Context) {
		cs, err := e.s.Claim(ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: n, Lease: time.Hour})
		if err != nil {
			e.t.Errorf("Claim: %v", err)
		}
		claims = append(claims, cs)
	}
	ctx = fault.With(e.ctx, fault.KeysAfterRead, fault.Rule{Action: fault.Call, Times: 2, Func: func(context.Context) error {
		calls++
		next := ctx
		if calls == 2 {
			next = e.ctx
		}
		claim(next)
		return nil
	}})
	claim(ctx)
	if calls != 2 {
		e.t.Fatalf("%d claims began inside another: the scenario did not happen", calls)
	}
	owners := map[string]int{}
	var sizes []int
	for i, cs := range claims {
		sizes = append(sizes, len(cs))
		for _, c := range cs {
			if j, ok := owners[c.FlowKey]; ok && j != i {
				e.t.Errorf("key %s was taken by claims %d and %d", c.FlowKey, j, i)
			}
			owners[c.FlowKey] = i
		}
	}
	if len(sizes) != 3 || slices.ContainsFunc(sizes, func(k int) bool { return k != n }) {
		e.t.Fatalf("claims at once took %v items (the last begun first), want three of %d: the later claims read the keys the first held", sizes, n)
	}
}

// Among keys without limits, a key with a limit of its own is claimed
// lane by lane, under its lane's lock, and neither beyond its limit nor
// starved by the others: twenty keys of 30 items without limits and a
// key of 30 with a concurrency limit of 2, claimed 20 at a time and held.
// A claim of 20 takes at least four keys, so that the claims pass through
// the 21 keys within six: the limited key has its 2 claimed by the
// eighth claim, and never more.
func testFlowKeysWithALimitAmongThem(e *env) {
	const queue, limited, limit = "flow-keys-mixed", "z-limited", 2
	if err := e.s.SetLimit(e.ctx, core.Limit{Queue: queue, Key: limited, Concurrency: limit}); err != nil {
		e.t.Fatalf("SetLimit: %v", err)
	}
	// The limited key last in key order, so that the claims of keys
	// meet it only after the others.
	e.enqueue(e.s, flowSpecs(queue, append(flowKeys(20), limited), 30)...)
	owner := e.owner(e.s)
	held := 0
	for i := range 12 {
		for _, c := range e.claim(e.s, owner, queue, 20) {
			if c.FlowKey == limited {
				held++
			}
		}
		if held > limit {
			e.t.Fatalf("claim %d: %d of the limited key claimed, its limit is %d", i+1, held, limit)
		}
		if i >= 7 && held < limit {
			e.t.Fatalf("claim %d: %d of the limited key claimed, want %d: the keys without limits starve it", i+1, held, limit)
		}
	}
}

// A queue claimed key by key, then given a limit, is claimed lane by
// lane from the next claim on, with the turns the claims of keys left
// behind: every key with work is found, none beyond the limit. Ten keys
// of ten items; three claims of 10 without limits, completed; then a
// default concurrency limit of 1, and claims held until nothing comes.
func testFlowKeysThenALimit(e *env) {
	const queue, keys = "flow-keys-then", 10
	e.enqueue(e.s, flowSpecs(queue, flowKeys(keys), 10)...)
	owner := e.owner(e.s)
	for range 3 {
		for _, c := range e.claim(e.s, owner, queue, 10) {
			e.complete(e.s, c, "")
		}
	}
	if err := e.s.SetLimit(e.ctx, core.Limit{Queue: queue, Concurrency: 1}); err != nil {
		e.t.Fatalf("SetLimit: %v", err)
	}
	got := map[string]int{}
	for claims := 0; ; claims++ {
		cs := e.claim(e.s, owner, queue, 10)
		if len(cs) == 0 {
			break
		}
		if claims == 20 {
			e.t.Fatalf("twenty claims under a limit of 1 over %d keys still took items", keys)
		}
		for _, c := range cs {
			got[c.FlowKey]++
		}
	}
	for _, k := range flowKeys(keys) {
		if got[k] != 1 {
			e.t.Errorf("key %s: %d claimed under a limit of 1, want 1 (%v)", k, got[k], fmt.Sprint(got))
		}
	}
}

// Claims of the same keys from two processes at once take each key's
// next items: each process keeps its own place in the keys, so that two
// stores begin at the same keys, and where the dialect's read of several
// keys locks each key's rows and passes over those held
// (dialect.KeyLockLister), the second claim takes the items after the
// first's. Four keys of ten items; a claim of 20 in one store's open
// transaction (five of each key), then a claim of 20 in another store:
// 20 each, none twice. Where the read chose each key's first items and
// only the claim passed over held rows, the second claim took nothing.
func testFlowKeysTwoProcessesTakeNextItems(e *env) {
	if _, ok := dialect.As[dialect.KeyLockLister](e.d); !ok || !e.caps.RecursiveScan || e.caps.SingleWriter {
		e.t.Skipf("dialect %s does not lock each key's rows as it reads them in a claim of keys (dialect.KeyLockLister)", e.d.Name())
	}
	const queue, keys, per, n = "flow-keys-two", 4, 10, 20
	e.enqueue(e.s, flowSpecs(queue, flowKeys(keys), per)...)
	other := e.open(core.Options{})
	owner, otherOwner := e.owner(e.s), e.owner(other)
	tx, err := e.s.Begin(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	defer tx.Rollback()
	first, err := e.s.ClaimTx(e.ctx, tx, core.ClaimParams{Queue: queue, Owner: owner, Limit: n, Lease: time.Hour})
	if err != nil {
		e.t.Fatalf("ClaimTx: %v", err)
	}
	second, err := other.Claim(e.ctx, core.ClaimParams{Queue: queue, Owner: otherOwner, Limit: n, Lease: time.Hour})
	if err != nil {
		e.t.Fatalf("the other store's Claim: %v", err)
	}
	if err := tx.Commit(); err != nil {
		e.t.Fatal(err)
	}
	seen := map[uuid.UUID]bool{}
	for _, c := range append(slices.Clone(first), second...) {
		if seen[c.ID] {
			e.t.Errorf("item %s claimed twice", c.ID)
		}
		seen[c.ID] = true
	}
	if len(first) != n || len(second) != n {
		e.t.Fatalf("the claims of two stores at once took %d and %d, want %d each: the second met the first's items", len(first), len(second), n)
	}
}
