package conformance

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/fault"
)

// Claims of keyed items that run at once share the queue's lanes: a
// claim holds the locks of the lanes it takes until it commits, and the
// claims beside it pass over those, so it must leave lanes to them. Ten
// keys of 100 items each; three claims of 100, the second begun while
// the first holds its lanes and the third while both do: each must take
// 100. When a claim took nine of the ten lanes, the second found one and
// the third none.
func testFlowClaimsShareLanes(e *env) {
	if e.caps.SingleWriter {
		e.t.Skipf("dialect %s runs one write transaction at a time (Capabilities.SingleWriter): no two claims hold lanes at once", e.d.Name())
	}
	const queue, keys, per, n = "flow-share", 10, 100, 100
	specs := make([]core.ItemSpec, 0, keys*per)
	for k := range keys {
		e.byLanes(queue, fmt.Sprintf("key-%02d", k))
		for range per {
			specs = append(specs, core.ItemSpec{Queue: queue, FlowKey: fmt.Sprintf("key-%02d", k)})
		}
	}
	e.enqueue(e.s, specs...)
	owner := e.owner(e.s)
	claim := func(ctx context.Context) int {
		cs, err := e.s.Claim(ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: n, Lease: time.Hour})
		if err != nil {
			e.t.Errorf("Claim: %v", err)
		}
		return len(cs)
	}
	// The first claim's hit begins the second with the rule still on,
	// whose hit begins the third without it.
	var sizes []int // innermost first
	var ctx context.Context
	calls := 0
	ctx = fault.With(e.ctx, fault.LanesAfterTake, fault.Rule{Action: fault.Call, Times: 2, Func: func(context.Context) error {
		calls++
		next := ctx
		if calls == 2 {
			next = e.ctx
		}
		sizes = append(sizes, claim(next))
		return nil
	}})
	sizes = append(sizes, claim(ctx))
	if calls == 0 {
		e.t.Fatal("the first claim took no lanes: the scenario did not happen")
	}
	// A claim that found no lanes did not reach the point, and began no
	// claim inside it.
	if len(sizes) != 3 || slices.ContainsFunc(sizes, func(k int) bool { return k != n }) {
		e.t.Fatalf("claims at once took %v items (the last begun first), want three of %d: the later claims found the lanes taken by the ones beside them", sizes, n)
	}
}
