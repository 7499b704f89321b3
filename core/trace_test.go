package core_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
)

// fired collects what a trace hears.
type fired struct {
	mu  sync.Mutex
	got []core.FiredBarrier
}

func (f *fired) ctx() context.Context {
	return core.WithTrace(context.Background(), &core.Trace{BarrierFired: func(_ context.Context, b core.FiredBarrier) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.got = append(f.got, b)
	}})
}

func (f *fired) take() []core.FiredBarrier {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.got
	f.got = nil
	return out
}

// fanOut claims a parent in queue "p" and expands it into n children in
// queue "c" (the join goes to "j"), then claims the children.
func fanOut(t *testing.T, ctx context.Context, b bundle, n int, policy core.FailurePolicy) (core.Barrier, []core.Claim) {
	t.Helper()
	parent := claimOne(t, b, "p")
	var kids []core.ChildSpec
	for i := range n {
		kids = append(kids, core.ChildSpec{Key: string(rune('a' + i)), Queue: "c", Kind: "child"})
	}
	r, err := b.store.Expand(ctx, parent, core.ExpandParams{
		Barrier: core.BarrierSpec{Name: "fan", Join: core.JoinSpec{Queue: "j", Kind: "join"}, OnChildFailure: policy},
		Next: func(context.Context, string) (core.ChildPage, error) {
			return core.ChildPage{Children: kids, Done: true}, nil
		},
		CompleteParent: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	var cs []core.Claim
	if n > 0 {
		cs, err = b.store.Claim(ctx, core.ClaimParams{Queue: "c", Owner: b.owner, Limit: n, Lease: time.Minute})
		if err != nil || len(cs) != n {
			t.Fatalf("claim children: %v, %d of %d", err, len(cs), n)
		}
	}
	return r.Barrier, cs
}

// check compares what was heard with the one barrier expected, and that
// its join item exists as reported.
func check(t *testing.T, b bundle, got []core.FiredBarrier, want core.Barrier, expected, arrived, failed int64, dead bool) {
	t.Helper()
	if len(got) != 1 {
		t.Fatalf("heard %d fired barriers, want 1: %+v", len(got), got)
	}
	g := got[0]
	if g.ID != want.ID || g.OwnerID != want.OwnerID || g.Name != "fan" || g.JoinQueue != "j" || g.JoinKind != "join" ||
		g.Expected != expected || g.Arrived != arrived || g.Failed != failed || g.JoinDead != dead {
		t.Fatalf("heard %+v, want barrier %s of %s, %d/%d/%d, join dead %v", g, want.ID, want.OwnerID, expected, arrived, failed, dead)
	}
	stored, err := b.store.GetBarrier(context.Background(), want.ID)
	if err != nil || stored.JoinItemID != g.JoinItemID || g.JoinItemID == uuid.Nil {
		t.Fatalf("barrier as stored: %+v, %v; heard join %s", stored, err, g.JoinItemID)
	}
	join, err := b.store.Get(context.Background(), g.JoinItemID)
	if err != nil || join.Queue != "j" || (join.State == core.StateDead) != dead {
		t.Fatalf("join item: %+v, %v", join, err)
	}
}

func TestTrace_CompleteManyReportsFiredBarrierAfterCommit(t *testing.T) {
	t.Parallel()
	b := setup(t, core.Options{})
	var f fired
	bar, cs := fanOut(t, context.Background(), b, 3, "")
	// The first two completions fire nothing; an untraced call reports
	// nothing to anyone.
	if _, err := b.store.CompleteMany(f.ctx(), []core.Completion{{Claim: cs[0]}}); err != nil {
		t.Fatal(err)
	}
	if err := b.store.Complete(context.Background(), cs[1], nil); err != nil {
		t.Fatal(err)
	}
	if got := f.take(); len(got) != 0 {
		t.Fatalf("heard %+v before the barrier fired", got)
	}
	// The commit of the firing transaction fails once: the rolled-back
	// attempt fired too, and must not be heard.
	b.f.failCommit.Store(1)
	if _, err := b.store.CompleteMany(f.ctx(), []core.Completion{{Claim: cs[2]}}); err != nil {
		t.Fatal(err)
	}
	if st := b.store.Stats(); st.Retries == 0 {
		t.Fatal("the commit was not retried: the test proves nothing about rolled-back attempts")
	}
	check(t, b, f.take(), bar, 3, 3, 0, false)
}

func TestTrace_SealInFenceReportsFiredBarrier(t *testing.T) {
	t.Parallel()
	b := setup(t, core.Options{})
	var f fired
	// No children: the seal, in Expand's fence, fires the barrier.
	bar, _ := fanOut(t, f.ctx(), b, 0, "")
	check(t, b, f.take(), bar, 0, 0, 0, false)
}

func TestTrace_FailReportsDeadJoin(t *testing.T) {
	t.Parallel()
	b := setup(t, core.Options{})
	var f fired
	bar, cs := fanOut(t, context.Background(), b, 2, core.FailBarrier)
	if err := b.store.Complete(context.Background(), cs[0], nil); err != nil {
		t.Fatal(err)
	}
	dead, err := b.store.Fail(f.ctx(), cs[1], core.FailParams{Error: "no", Discard: true})
	if err != nil || !dead {
		t.Fatalf("fail: dead %v, %v", dead, err)
	}
	check(t, b, f.take(), bar, 2, 1, 1, true)
}

func TestTrace_ReapReportsFiredBarrier(t *testing.T) {
	t.Parallel()
	b := setup(t, core.Options{})
	var f fired
	bar, cs := fanOut(t, context.Background(), b, 2, "")
	if err := b.store.Complete(context.Background(), cs[0], nil); err != nil {
		t.Fatal(err)
	}
	// Two minutes later the owner is stale; one crash dead-letters the
	// other child, whose failed arrival fires the barrier.
	later, err := core.Open(context.Background(), b.db, b.f, core.Options{ClockOffset: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	r, err := later.Reap(f.ctx(), core.ReapParams{StaleAfter: time.Minute, MaxCrashes: 1})
	if err != nil || r.DeadLettered != 1 {
		t.Fatalf("reap: %+v, %v", r, err)
	}
	check(t, b, f.take(), bar, 2, 1, 1, false)
}

func TestWithTrace_Chains(t *testing.T) {
	t.Parallel()
	b := setup(t, core.Options{})
	var outer, inner fired
	ctx := core.WithTrace(outer.ctx(), &core.Trace{BarrierFired: func(ctx context.Context, fb core.FiredBarrier) {
		inner.mu.Lock()
		defer inner.mu.Unlock()
		inner.got = append(inner.got, fb)
	}})
	bar, _ := fanOut(t, ctx, b, 0, "")
	check(t, b, outer.take(), bar, 0, 0, 0, false)
	check(t, b, inner.take(), bar, 0, 0, 0, false)
}
