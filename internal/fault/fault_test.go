package fault_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/internal/fault"
)

func TestHit_NoRuleReturnsNil(t *testing.T) {
	t.Parallel()
	for _, p := range fault.Points() {
		if err := fault.Hit(context.Background(), p); err != nil {
			t.Errorf("%s: %v with no rule", p, err)
		}
	}
}

func TestWith_ScopesTheRuleToItsContexts(t *testing.T) {
	t.Parallel()
	base := context.Background()
	ctx := fault.With(base, fault.FireBeforeJoin, fault.Rule{Action: fault.Error})
	child, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := fault.Hit(child, fault.FireBeforeJoin); !errors.Is(err, fault.ErrInjected) {
		t.Fatalf("derived context: %v, want the injected error", err)
	}
	var inj *fault.Injected
	if err := fault.Hit(ctx, fault.FireBeforeJoin); !errors.As(err, &inj) || inj.Point != fault.FireBeforeJoin || inj.Action != fault.Error {
		t.Fatalf("got %v, want an *Injected naming the point", err)
	}
	if err := fault.Hit(base, fault.FireBeforeJoin); err != nil {
		t.Fatalf("another context: %v, want nil", err)
	}
	if err := fault.Hit(ctx, fault.AfterClaim); err != nil {
		t.Fatalf("another point: %v, want nil", err)
	}
}

func TestWith_InnerRuleReplacesOuter(t *testing.T) {
	t.Parallel()
	mine := errors.New("mine")
	ctx := fault.With(context.Background(), fault.AfterClaim, fault.Rule{Action: fault.Error})
	ctx = fault.With(ctx, fault.AfterClaim, fault.Rule{Action: fault.Error, Err: mine})
	ctx = fault.With(ctx, fault.BeforeCompletion, fault.Rule{Action: fault.Error})
	if err := fault.Hit(ctx, fault.AfterClaim); err != mine {
		t.Fatalf("got %v, want the inner rule's error", err)
	}
	if err := fault.Hit(ctx, fault.BeforeCompletion); !errors.Is(err, fault.ErrInjected) {
		t.Fatalf("got %v, want the other point's rule", err)
	}
}

func TestRule_SkipTimesAndProbability(t *testing.T) {
	t.Parallel()
	ctx := fault.With(context.Background(), fault.DispatchBetweenPages, fault.Rule{Action: fault.Error, Skip: 2, Times: 3})
	var got []bool
	for range 8 {
		got = append(got, fault.Hit(ctx, fault.DispatchBetweenPages) != nil)
	}
	want := []bool{false, false, true, true, true, false, false, false}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("fired %v, want %v", got, want)
		}
	}
	ctx = fault.With(context.Background(), fault.DispatchBetweenPages, fault.Rule{Action: fault.Error, Prob: 0.5})
	n := 0
	for range 2000 {
		if fault.Hit(ctx, fault.DispatchBetweenPages) != nil {
			n++
		}
	}
	if n == 0 || n == 2000 {
		t.Fatalf("probability 0.5 fired %d of 2000 hits", n)
	}
}

func TestRule_PanicCarriesInjected(t *testing.T) {
	t.Parallel()
	ctx := fault.With(context.Background(), fault.FenceBeforeCommit, fault.Rule{Action: fault.Panic})
	defer func() {
		p := recover()
		err, ok := p.(error)
		if !ok || !errors.Is(err, fault.ErrInjected) {
			t.Fatalf("panicked with %v, want an injected error", p)
		}
	}()
	_ = fault.Hit(ctx, fault.FenceBeforeCommit)
	t.Fatal("no panic")
}

func TestRule_StallListensToItsContextUnlessDeaf(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stall := fault.With(ctx, fault.AfterClaim, fault.Rule{Action: fault.Stall, Stall: time.Hour})
	if err := fault.Hit(stall, fault.AfterClaim); !errors.Is(err, context.Canceled) {
		t.Fatalf("stall under a cancelled context: %v, want context.Canceled", err)
	}
	deaf := fault.With(ctx, fault.AfterClaim, fault.Rule{Action: fault.Stall, Stall: time.Millisecond, IgnoreContext: true})
	if err := fault.Hit(deaf, fault.AfterClaim); err != nil {
		t.Fatalf("deaf stall: %v, want nil after sleeping", err)
	}
}

func TestRule_CallRunsAtThePoint(t *testing.T) {
	t.Parallel()
	calls := 0
	ctx := fault.With(context.Background(), fault.RetainBetweenBatches, fault.Rule{Action: fault.Call, Func: func(context.Context) error { calls++; return nil }})
	_ = fault.Hit(ctx, fault.RetainBetweenBatches)
	_ = fault.Hit(ctx, fault.RetainBetweenBatches)
	if calls != 2 {
		t.Fatalf("called %d times, want 2", calls)
	}
}

func TestHitWith_CallSeesTheDetail(t *testing.T) {
	t.Parallel()
	var seen []string
	ctx := fault.With(context.Background(), fault.MigrateBeforeStatement, fault.Rule{Action: fault.Call, Func: func(ctx context.Context) error {
		seen = append(seen, fault.Detail(ctx))
		if fault.Detail(ctx) == "DROP TABLE t" {
			return errors.New("refused")
		}
		return nil
	}})
	if err := fault.HitWith(ctx, fault.MigrateBeforeStatement, "CREATE TABLE t"); err != nil {
		t.Fatalf("first statement: %v", err)
	}
	if err := fault.HitWith(ctx, fault.MigrateBeforeStatement, "DROP TABLE t"); err == nil {
		t.Fatal("second statement: no error, want the rule's")
	}
	if len(seen) != 2 || seen[0] != "CREATE TABLE t" {
		t.Fatalf("details seen %q", seen)
	}
	if d := fault.Detail(context.Background()); d != "" {
		t.Fatalf("Detail outside a hit = %q", d)
	}
}

// Set is process-wide: this test is not parallel, and uses a point no
// other test of the package hits.
func TestSet_AppliesEverywhereUntilUndone(t *testing.T) {
	before := fault.Fired(fault.ReapBeforeCrashCount)
	undo := fault.Set(fault.ReapBeforeCrashCount, fault.Rule{Action: fault.Error})
	if err := fault.Hit(context.Background(), fault.ReapBeforeCrashCount); !errors.Is(err, fault.ErrInjected) {
		t.Fatalf("got %v, want the injected error", err)
	}
	undo()
	undo() // twice is harmless
	if err := fault.Hit(context.Background(), fault.ReapBeforeCrashCount); err != nil {
		t.Fatalf("after undo: %v", err)
	}
	if got := fault.Fired(fault.ReapBeforeCrashCount) - before; got != 1 {
		t.Fatalf("Fired counted %d, want 1", got)
	}
}

func TestRule_InvalidIsRefused(t *testing.T) {
	t.Parallel()
	for _, r := range []fault.Rule{{}, {Action: fault.Stall}, {Action: fault.Call}, {Action: fault.Error, Prob: 2}, {Action: fault.Error, Skip: -1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("With accepted %+v", r)
				}
			}()
			fault.With(context.Background(), fault.AfterClaim, r)
		}()
	}
}

func TestParse_ReadsRulesAndRoundTrips(t *testing.T) {
	t.Parallel()
	rules, err := fault.Parse("complete-before-arrival=kill@0.01, after-claim=hang:40s+10*1 fire-before-join=stall:2s,fence-before-commit=error")
	if err != nil {
		t.Fatal(err)
	}
	want := map[fault.Point]string{
		fault.CompleteBeforeArrival: "kill@0.01",
		fault.AfterClaim:            "hang:40s+10*1",
		fault.FireBeforeJoin:        "stall:2s",
		fault.FenceBeforeCommit:     "error",
	}
	if len(rules) != len(want) {
		t.Fatalf("got %v", rules)
	}
	for p, s := range want {
		if got := rules[p].String(); got != s {
			t.Errorf("%s: %q, want %q", p, got, s)
		}
	}
	if r := rules[fault.AfterClaim]; r.Action != fault.Stall || !r.IgnoreContext || r.Stall != 40*time.Second || r.Skip != 10 || r.Times != 1 {
		t.Errorf("after-claim: %+v", r)
	}
	if rules, err := fault.Parse(""); err != nil || len(rules) != 0 {
		t.Errorf("empty spec: %v, %v", rules, err)
	}
}

func TestParse_RefusesBadSpecs(t *testing.T) {
	t.Parallel()
	for _, spec := range []string{
		"after-claim", "nowhere=kill", "after-claim=explode", "after-claim=stall",
		"after-claim=stall:soon", "after-claim=kill:now", "after-claim=kill@x",
		"after-claim=kill@0", "after-claim=kill@1.5", "after-claim=kill+-1",
		"after-claim=kill*y", "after-claim=kill,after-claim=panic",
	} {
		if _, err := fault.Parse(spec); err == nil || !strings.Contains(err.Error(), "plenum/fault") {
			t.Errorf("Parse(%q) = %v, want an error", spec, err)
		}
	}
}

const killEnv = "PLENUM_FAULT_KILL_CHILD"

// The child process is this test binary run again; it installs a kill rule
// and hits it, and its deferred code must not run.
func TestKill_EndsTheProcessWithSIGKILL(t *testing.T) {
	if os.Getenv(killEnv) != "" {
		undo := fault.Install(map[fault.Point]fault.Rule{fault.AfterClaim: {Action: fault.Kill}})
		defer undo()
		defer os.Stdout.WriteString("deferred code ran\n")
		_ = fault.Hit(context.Background(), fault.AfterClaim)
		os.Stdout.WriteString("survived\n")
		return
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKill_EndsTheProcessWithSIGKILL$")
	cmd.Env = append(os.Environ(), killEnv+"=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !killedBySIGKILL(exit) {
		t.Fatalf("child ended with %v, want death by SIGKILL", err)
	}
	if stdout.String() != "" {
		t.Errorf("child wrote %q after the kill", stdout.String())
	}
	if !strings.Contains(stderr.String(), "plenum/fault: kill at after-claim") {
		t.Errorf("stderr %q does not name the point", stderr.String())
	}
}

// BenchmarkHit_Off is the cost of an injection point when no rule is
// installed anywhere: one atomic load, no allocation.
func BenchmarkHit_Off(b *testing.B) {
	if fault.Armed() {
		b.Skip("a test of this run installed rules: benchmark alone, with -run '^$'")
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if fault.Hit(ctx, fault.CompleteBeforeArrival) != nil {
			b.Fatal("a rule is installed")
		}
	}
}
