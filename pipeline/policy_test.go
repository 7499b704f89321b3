package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
)

// A Backoff grows by its Factor (2 by default) from Initial, stops at
// Max, and moves each wait by at most Jitter of itself, never above Max.
func TestBackoff_GrowsToItsCapWithinItsJitter(t *testing.T) {
	t.Parallel()
	b := Backoff{Initial: time.Second, Max: 10 * time.Second}
	for attempt, want := range map[int]time.Duration{0: time.Second, 1: time.Second, 2: 2 * time.Second, 4: 8 * time.Second, 5: 10 * time.Second, 500: 10 * time.Second} {
		if got := b.wait(attempt); got != want {
			t.Errorf("wait(%d) = %v, want %v", attempt, got, want)
		}
	}
	if got := (Backoff{Initial: time.Second, Factor: 1}).wait(9); got != time.Second {
		t.Errorf("Factor 1: wait(9) = %v, want 1s", got)
	}
	if got := (Backoff{Initial: time.Hour}).wait(1000); got != core.MaxDelay {
		t.Errorf("no Max: wait(1000) = %v, want core.MaxDelay", got)
	}
	j := Backoff{Initial: 4 * time.Second, Max: 5 * time.Second, Jitter: 0.5}
	seen := map[bool]bool{}
	for range 1000 {
		got := j.wait(1)
		if got < 2*time.Second || got > 5*time.Second {
			t.Fatalf("jittered wait %v outside [2s, 5s]", got)
		}
		seen[got < 4*time.Second] = true
	}
	if !seen[true] || !seen[false] {
		t.Errorf("1,000 jittered waits all on one side of Initial")
	}
}

// Define refuses timeouts, delays and backoffs out of range, naming the
// step and the field.
func TestDefine_RefusesBadStepPolicies(t *testing.T) {
	t.Parallel()
	step := func(name string, o StepOptions) Flow[int, int] {
		return Step(name, func(_ context.Context, n int) (int, error) { return n, nil }, o)
	}
	_, err := Define("p", Then(Then(Then(Then(
		step("neg-timeout", StepOptions{Timeout: -time.Second}),
		step("long-delay", StepOptions{Delay: core.MaxDelay + time.Second})),
		step("no-initial", StepOptions{Backoff: Backoff{Max: time.Second}})),
		step("small-factor", StepOptions{Backoff: Backoff{Initial: time.Second, Factor: 0.5}})),
		step("jitter", StepOptions{Backoff: Backoff{Initial: time.Second, Jitter: 1}})),
		Options{Backoff: Backoff{Initial: 2 * time.Second, Max: time.Second}})
	for _, want := range []string{
		"at p > neg-timeout: StepOptions.Timeout is -1s",
		"at p > long-delay: StepOptions.Delay is",
		"at p > no-initial: StepOptions.Backoff.Initial must be above zero",
		"at p > small-factor: StepOptions.Backoff.Factor must be",
		"at p > jitter: StepOptions.Backoff.Jitter must be within [0, 1)",
		`"p": Options.Backoff.Max is below Backoff.Initial`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error misses %q:\n%v", want, err)
		}
	}
}

// The claim loop reads the version and node of an item's envelope, and
// stops there.
func TestNodeOf_ReadsTheEnvelopesVersionAndNode(t *testing.T) {
	t.Parallel()
	type vn struct {
		v    int
		node string
	}
	for payload, want := range map[string]vn{
		`{"run":"x","node":"ship","in":{"big":[1,2,3]}}`: {1, "ship"},
		`{"run":"x","v":3,"node":"ship","in":{"v":4}}`:   {3, "ship"},
		`{"v":0,"node":"a"}`:                             {1, "a"},
		`{"node": "a"}`:                                  {1, "a"},
		`{"in":[{"node":"no"}],"node":"yes"}`:            {1, "yes"},
		`[1]`:                                            {1, ""},
		`{"node":1}`:                                     {1, ""},
		``:                                               {1, ""},
	} {
		if v, node := nodeOf([]byte(payload)); v != want.v || node != want.node {
			t.Errorf("nodeOf(%s) = %d, %q, want %d, %q", payload, v, node, want.v, want.node)
		}
	}
}

// A WaitUntil's checks follow their schedule from the first: each wait
// reaches the next check's time, however late the check before ran.
func TestBackoff_UntilNextKeepsTheSchedule(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	b := Backoff{Initial: 100 * ms, Max: 400 * ms} // checks at 0, 100, 300, 700, 1100, 1500, ...
	for elapsed, want := range map[time.Duration]time.Duration{
		0: 100 * ms, 50 * ms: 50 * ms, 100 * ms: 200 * ms, 299 * ms: 1 * ms, 300 * ms: 400 * ms,
		1000 * ms: 100 * ms, 1100 * ms: 400 * ms, 10_000 * ms: 300 * ms,
	} {
		if got := b.untilNext(elapsed); got != want {
			t.Errorf("untilNext(%v) = %v, want %v", elapsed, got, want)
		}
	}
	if got := (Backoff{Initial: time.Second, Factor: 1}).untilNext(1000 * time.Hour); got != time.Second {
		t.Errorf("a fixed interval, far along: %v, want 1s", got)
	}
}

// Define refuses a WaitUntil without a condition or a schedule, and
// checks the flow it takes on a timeout.
func TestDefine_RefusesBadWaits(t *testing.T) {
	t.Parallel()
	_, err := Define("p", Then(
		WaitUntil[int, int]("no-cond", nil, Flow[int, int]{}, WaitOptions{Every: Backoff{Initial: time.Second}}),
		WaitUntil("no-every", func(context.Context, int) (int, bool, error) { return 0, true, nil }, inc("no-every"), WaitOptions{Timeout: -1})))
	for _, want := range []string{
		"at p > no-cond: the wait's condition is nil",
		"at p > no-every: WaitOptions.Every.Initial must be above zero",
		"at p > no-every: WaitOptions.Timeout is negative",
		`name "no-every" is used twice`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error misses %q:\n%v", want, err)
		}
	}
}

// The worker's configuration of a pipeline's items: a step's Timeout and
// Backoff override the pipeline's, the pipeline's the worker's, and the
// kind's Timeout is the longest of them all, which sets the lease.
func TestKindConfig_StepsOverrideThePipeline(t *testing.T) {
	t.Parallel()
	item := func(node string) core.Item {
		return core.Item{Payload: []byte(`{"run":"r","node":"` + node + `","in":1}`)}
	}
	own := StepOptions{Timeout: 2 * time.Minute, Backoff: Backoff{Initial: time.Second, Factor: 1}}
	p, err := Define("p", Then(Then(Step("own", func(_ context.Context, n int) (int, error) { return n, nil }, own), inc("plain")),
		WaitUntil("wait", func(context.Context, int) (int, bool, error) { return 0, true, nil }, Flow[int, int]{}, WaitOptions{StepOptions: StepOptions{Timeout: time.Second}, Every: Backoff{Initial: time.Second}})),
		Options{Timeout: 90 * time.Second, Backoff: Backoff{Initial: 3 * time.Second, Factor: 1}})
	if err != nil {
		t.Fatal(err)
	}
	kc := kindConfig(one(p.def), time.Minute)
	if len(kc) != 1 || kc[0].Timeout != 2*time.Minute || kc[0].ForItem == nil {
		t.Fatalf("kind config %+v, want the longest Timeout (2m) and ForItem", kc)
	}
	for node, want := range map[string]struct {
		timeout, backoff time.Duration
	}{"own": {2 * time.Minute, time.Second}, "plain": {90 * time.Second, 3 * time.Second}, "wait": {time.Second, 3 * time.Second}, "gone": {90 * time.Second, 0}} {
		ic := kc[0].ForItem(item(node))
		var backoff time.Duration
		if ic.Backoff != nil {
			backoff = ic.Backoff(1)
		}
		if ic.Timeout != want.timeout || backoff != want.backoff {
			t.Errorf("%s: timeout %v, backoff %v; want %v, %v", node, ic.Timeout, backoff, want.timeout, want.backoff)
		}
	}
	plain, _ := Define("q", inc("x"), Options{Timeout: 90 * time.Second})
	if kc := kindConfig(one(plain.def), time.Minute); len(kc) != 1 || kc[0].Timeout != 90*time.Second || kc[0].ForItem != nil {
		t.Errorf("a pipeline without step policies: %+v, want its Timeout alone", kc)
	}
	if kc := kindConfig(one(func() *definition { p, _ := Define("r", inc("x")); return p.def }()), time.Minute); kc != nil {
		t.Errorf("a pipeline with no policy: %+v, want the worker's defaults", kc)
	}
}

// one is the versions of a pipeline registered alone.
func one(def *definition) map[int]*definition { return map[int]*definition{def.version: def} }

// Two versions of a pipeline registered together: each item takes the
// Timeout of its own version's step, by the version its envelope names,
// and the kind's Timeout is the longest of both.
func TestKindConfig_EachVersionItsOwn(t *testing.T) {
	t.Parallel()
	step := func(d time.Duration) Flow[int, int] {
		return Step("s", func(_ context.Context, n int) (int, error) { return n, nil }, StepOptions{Timeout: d})
	}
	v1, err1 := Define("p", step(time.Minute))
	v2, err2 := Define("p", step(3*time.Minute), Options{Version: 2})
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	kc := kindConfig(map[int]*definition{1: v1.def, 2: v2.def}, 30*time.Second)
	if len(kc) != 1 || kc[0].Timeout != 3*time.Minute || kc[0].ForItem == nil {
		t.Fatalf("kind config %+v, want the longest Timeout (3m) and ForItem", kc)
	}
	for payload, want := range map[string]time.Duration{
		`{"run":"r","node":"s"}`:       time.Minute,
		`{"run":"r","v":2,"node":"s"}`: 3 * time.Minute,
		`{"run":"r","v":2,"node":"t"}`: 30 * time.Second,
		`{"run":"r","v":7,"node":"s"}`: 0,
	} {
		if got := kc[0].ForItem(core.Item{Payload: []byte(payload)}).Timeout; got != want {
			t.Errorf("%s: timeout %v, want %v", payload, got, want)
		}
	}
	plain1, _ := Define("q", inc("x"), Options{Timeout: time.Minute})
	plain2, _ := Define("q", inc("y"), Options{Timeout: 2 * time.Minute, Version: 2})
	kc = kindConfig(map[int]*definition{1: plain1.def, 2: plain2.def}, 30*time.Second)
	if len(kc) != 1 || kc[0].Timeout != 2*time.Minute || kc[0].ForItem == nil || kc[0].ForItem(core.Item{Payload: []byte(`{"node":"x"}`)}).Timeout != time.Minute {
		t.Errorf("two versions of different Options.Timeout: %+v, want each its own", kc)
	}
}
