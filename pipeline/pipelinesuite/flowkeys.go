package pipelinesuite

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/pipeline"
)

// batch is the input of the flow-key subtest's runs.
type batch struct {
	Tenant string `json:"tenant"`
	N      int    `json:"n"`
}

// stepsUnderFlowKeys: a step's flow key is set on its items wherever
// they are made, from the step's input or the run's: at the trigger
// (prepare, by its input), as an expand's children (work, by the run's
// input) and after the step before them (check, by its input, with its
// Cost); the expand's own item and its join (a barrier's) have none. A
// concurrency limit of two on the work's key bounds how many of them run
// at once, on a worker of eight slots, and the run completes.
func stepsUnderFlowKeys(e *env) {
	const tenant, n, limit = "acme", 12, 2
	var running, most atomic.Int64
	prepare := pipeline.Step("prepare", func(_ context.Context, b batch) ([]int, error) {
		out := make([]int, b.N)
		for i := range out {
			out[i] = i
		}
		return out, nil
	}, pipeline.StepOptions{FlowKey: pipeline.FlowKeyFrom(func(b batch) string { return "prep-" + b.Tenant })})
	work := pipeline.Step("work", func(_ context.Context, i int) (int, error) {
		now := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
		}
		// Until another runs beside it, for a while: time for more to
		// start, were the limit not kept.
		for end := time.Now().Add(200 * time.Millisecond); running.Load() < limit && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(10 * time.Millisecond)
		return i, nil
	}, pipeline.StepOptions{RunFlowKey: pipeline.FlowKeyFrom(func(b batch) string { return b.Tenant })})
	check := pipeline.Step("check", func(_ context.Context, i int) (int, error) { return i, nil },
		pipeline.StepOptions{FlowKey: pipeline.FlowKeyFrom(func(i int) string { return fmt.Sprintf("check-%d", i%2) }), Cost: 2})
	sum := func(ctx context.Context, r *pipeline.Results[int]) (int, error) {
		total := 0
		err := r.Each(ctx, func(x pipeline.Result[int]) error { total += x.Value; return nil })
		return total, err
	}
	fan := pipeline.Expand("fan", func(_ context.Context, xs []int) ([]int, error) { return xs, nil }, pipeline.Then(work, check), sum)
	p := define(e, "flowkeys", pipeline.Then(prepare, fan))
	eng := e.engine(pipeline.EngineOptions{}, p)
	// The limit is in place before the run makes any item.
	if err := e.store.SetLimit(e.ctx, core.Limit{Queue: queue, Key: tenant, Concurrency: limit}); err != nil {
		e.t.Fatal(err)
	}
	run, err := p.Trigger(e.ctx, eng, batch{Tenant: tenant, N: n})
	if err != nil {
		e.t.Fatal(err)
	}
	if got := output[int](e, e.waitRun(eng, run, pipeline.StateCompleted)); got != n*(n-1)/2 {
		e.t.Errorf("output %d, want %d", got, n*(n-1)/2)
	}
	if m := most.Load(); m != limit {
		e.t.Errorf("at most %d work steps ran at once, want %d (the key's concurrency limit, reached)", m, limit)
	}

	items, err := e.store.RunItems(e.ctx, core.RunItemsParams{Run: run, Limit: 1000})
	if err != nil {
		e.t.Fatal(err)
	}
	count := map[string]int{}
	for _, it := range items {
		var env struct {
			Node string          `json:"node"`
			Role string          `json:"role"`
			In   json.RawMessage `json:"in"`
		}
		if err := json.Unmarshal(it.Payload, &env); err != nil {
			continue // not a step's item (the halt's)
		}
		want, cost := "", 1
		switch {
		case env.Role != "":
			// A barrier's join: no key.
		case env.Node == "prepare":
			want = "prep-" + tenant
		case env.Node == "work":
			want = tenant
		case env.Node == "check":
			var i int
			if err := json.Unmarshal(env.In, &i); err != nil {
				e.t.Fatalf("check's input %s: %v", env.In, err)
			}
			want, cost = fmt.Sprintf("check-%d", i%2), 2
		}
		if want == "" {
			cost = 0
		}
		if it.FlowKey != want || it.Cost != cost {
			e.t.Errorf("item %s of %s (role %q): flow key %q cost %d, want %q and %d", it.ID, env.Node, env.Role, it.FlowKey, it.Cost, want, cost)
		}
		count[env.Node+"/"+env.Role]++
	}
	if want := map[string]int{"prepare/": 1, "fan/": 1, "work/": n, "check/": n, "fan/collapse": 1}; fmt.Sprint(count) != fmt.Sprint(want) {
		e.t.Errorf("items of the run by node/role: %v, want %v", count, want)
	}
}
