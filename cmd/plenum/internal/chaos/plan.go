package chaos

import (
	"fmt"
	"hash/fnv"
	"time"
)

// Plan is the workload of a round.
type Plan struct {
	// Chains is the number of chains, each ChainSteps steps long: every
	// step enqueues the next inside the fence that completes it.
	Chains, ChainSteps int
	// Fanouts is the number of parents that each expand into Children
	// children, Page of them per dispatch transaction; each barrier's join
	// reads the children's results back Page at a time.
	Fanouts, Children, Page int
	// FailEvery makes about one unit in FailEvery fail its first attempt
	// (retried after a short backoff). 0 plans no failures.
	FailEvery int
	// TickEvery is the interval of the periodic schedule the workers run
	// while faults are on; 0 runs none.
	TickEvery time.Duration
	// Batched has the children complete through the runtime's batched
	// completions (the hot path: one statement per batch, one arrival
	// update per barrier per batch) instead of each in a fence with its
	// audit row. Their proof is then their barrier's: as many completed
	// children as expected and arrived, one firing, and a join that saw
	// every child's own result once.
	Batched bool
	// Generations is how many times the chains and fan-outs above are
	// seeded, each generation under chain and fan-out numbers of its own.
	// 0 means 1. A round that refills seeds more while it runs and counts
	// them here.
	Generations int
	// FlowKeys keys of FlowItems items each run under the queue's default
	// concurrency limit of FlowLimit per key; RateKeys keys of RateItems
	// items each under a rate limit of their own, Rate per RatePer with
	// RateBurst (see flow.go). Each generation seeds them anew, on the
	// same keys.
	FlowKeys, FlowItems, FlowLimit int
	RateKeys, RateItems, Rate      int
	RatePer                        time.Duration
	RateBurst                      int
}

// gens is the number of generations, at least one.
func (p Plan) gens() int { return max(1, p.Generations) }

// chains and fanouts are the numbers of chains and fan-outs of every
// generation together.
func (p Plan) chains() int  { return p.Chains * p.gens() }
func (p Plan) fanouts() int { return p.Fanouts * p.gens() }

// DefaultPlan is the workload of a short round, and one generation of a
// round that refills: small, so that what is left when the faults stop
// drains within the two minutes a round allows on a slow database.
func DefaultPlan() Plan {
	return Plan{Chains: 20, ChainSteps: 10, Fanouts: 2, Children: 1000, Page: 100, FailEvery: 7, TickEvery: 2 * time.Second,
		FlowKeys: 8, FlowItems: 12, FlowLimit: 2, RateKeys: 3, RateItems: 6, Rate: 3, RatePer: 3 * time.Second, RateBurst: 2}
}

// LoadPlan is a workload of about n items, most of them the children of
// fan-outs of 10,000, completed in batches.
func LoadPlan(n int) Plan {
	fan := max(1, n/10000)
	return Plan{Chains: 100, ChainSteps: 10, Fanouts: fan, Children: 10000, Page: 1000, FailEvery: 50, TickEvery: 5 * time.Second, Batched: true}
}

// Validate says what is wrong with p, if anything.
func (p Plan) Validate() error {
	switch {
	case p.Chains < 0 || p.ChainSteps < 0 || p.Fanouts < 0 || p.Children < 0:
		return fmt.Errorf("chaos: plan %+v: negative count", p)
	case p.Chains > 0 && p.ChainSteps < 1:
		return fmt.Errorf("chaos: plan: %d chains of %d steps", p.Chains, p.ChainSteps)
	case p.Fanouts > 0 && (p.Children < 1 || p.Page < 1 || p.Page > 5000):
		return fmt.Errorf("chaos: plan: fan-outs of %d children in pages of %d (want at least 1 child and pages of 1 to 5000)", p.Children, p.Page)
	case p.Generations < 0:
		return fmt.Errorf("chaos: plan: Generations %d is negative", p.Generations)
	case p.FailEvery < 0:
		return fmt.Errorf("chaos: plan: FailEvery %d is negative", p.FailEvery)
	case p.TickEvery != 0 && p.TickEvery < time.Second:
		return fmt.Errorf("chaos: plan: TickEvery %v is below a second", p.TickEvery)
	case p.FlowKeys < 0 || p.FlowItems < 0 || p.RateKeys < 0 || p.RateItems < 0:
		return fmt.Errorf("chaos: plan %+v: negative count of keyed items", p)
	case p.FlowKeys > 0 && (p.FlowItems < 1 || p.FlowLimit < 1):
		return fmt.Errorf("chaos: plan: %d keys of %d items under a concurrency limit of %d (want at least 1 of each)", p.FlowKeys, p.FlowItems, p.FlowLimit)
	case p.RateKeys > 0 && (p.RateItems < 1 || p.Rate < 1 || p.RatePer < time.Millisecond || p.RateBurst < 0):
		return fmt.Errorf("chaos: plan: %d keys of %d items under a rate of %d per %v, burst %d", p.RateKeys, p.RateItems, p.Rate, p.RatePer, p.RateBurst)
	}
	return nil
}

// Units is the number of units of work the plan completes, ticks aside:
// every chain step, every child and every join, every keyed item (the parents complete in
// the transaction that seals their barrier and write no audit row).
func (p Plan) Units() int64 {
	return int64(p.chains())*int64(p.ChainSteps) + int64(p.fanouts())*(int64(p.Children)+1) + int64(p.gens())*int64(p.flowUnits())
}

// Items is the number of items the plan creates, ticks aside.
func (p Plan) Items() int64 { return p.Units() + int64(p.fanouts()) }

// Kinds of the workload's items.
const (
	kindStep   = "chaos.step"
	kindParent = "chaos.parent"
	kindChild  = "chaos.child"
	kindJoin   = "chaos.join"
	kindTick   = "chaos.tick"
	queue      = "chaos"
	// Parents have a queue of their own, with few slots: a hundred
	// parents expanding at once would take every slot from the children
	// (and, on SQLite, every turn at the write lock).
	parentQueue = "chaos-parents"
	parentSlots = 1
	barrierFan  = "fan"
	tickName    = "chaos-tick"
)

// Unit names: the audit's key for each unit of work.
func stepUnit(chain, step int) string { return fmt.Sprintf("step/%d/%d", chain, step) }
func childUnit(fan, n int) string     { return fmt.Sprintf("child/%d/%d", fan, n) }
func joinUnit(fan int) string         { return fmt.Sprintf("join/%d", fan) }
func tickUnit(key string) string      { return "tick/" + key }

// stepKey and parentKey are the idempotency keys of chain steps and
// parents; childKey is a child's key within its barrier.
func stepKey(chain, step int) string { return fmt.Sprintf("step-%d-%d", chain, step) }
func parentKey(fan int) string       { return fmt.Sprintf("fan-%d", fan) }
func childKey(n int) string          { return fmt.Sprintf("c%d", n) }

// failsFirst reports whether unit is planned to fail its first attempt.
func (p Plan) failsFirst(unit string) bool {
	if p.FailEvery == 0 {
		return false
	}
	h := fnv.New32a()
	h.Write([]byte(unit))
	return h.Sum32()%uint32(p.FailEvery) == 0
}

// joinTotal is the sum of a fan-out's children's results: child n returns n.
func (p Plan) joinTotal() int64 { return int64(p.Children) * int64(p.Children-1) / 2 }
