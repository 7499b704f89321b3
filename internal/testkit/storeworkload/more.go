package storeworkload

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
)

// workloadMore reaches, after workload on the same tables, the paths
// workload does not: completions of differing results with a claim lost
// among them and of a barrier's members, a child key added twice,
// barriers that fire (a join made, and one made dead under FailBarrier),
// a failure taken back by Revive, the reaper's crashes (retried and dead)
// and timeouts that kill, and the purge of a fired barrier. It uses
// stores at clock offsets 0 and 4h only.
func workloadMore(t *testing.T, db *sql.DB, d dialect.Dialect) {
	ctx := context.Background()
	must := fatal(t)
	s := open(t, db, d, core.Options{})
	reaper := open(t, db, d, core.Options{ClockOffset: 4 * time.Hour})
	owner, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{})
	must(err)
	claim := func(queue string, n int) []core.Claim {
		t.Helper()
		cs, err := s.Claim(ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: n, Lease: time.Minute})
		must(err)
		if len(cs) != n {
			t.Fatalf("claimed %d of %q, want %d", len(cs), queue, n)
		}
		return cs
	}

	// Differing results, one claim lost before the completion.
	_, err = s.Enqueue(ctx, core.ItemSpec{Queue: "m"}, core.ItemSpec{Queue: "m"}, core.ItemSpec{Queue: "m"})
	must(err)
	cs := claim("m", 3)
	must(s.Cancel(ctx, cs[1].ID))
	_, err = s.CompleteMany(ctx, []core.Completion{{Claim: cs[0], Result: json.RawMessage(`1`)}, {Claim: cs[1], Result: json.RawMessage(`2`)}, {Claim: cs[2], Result: json.RawMessage(`3`)}})
	must(err)

	// Differing results of a barrier's members, whose completion counts
	// their arrivals: once with claims that name their barrier, once with
	// claims that do not name one barrier (their rows are read first).
	members := func(q string) []core.Claim {
		_, err := s.Enqueue(ctx, core.ItemSpec{Queue: q})
		must(err)
		_, err = s.Expand(ctx, claim(q, 1)[0], core.ExpandParams{
			Barrier: core.BarrierSpec{Name: "results", Join: core.JoinSpec{Queue: q + "j"}},
			Next: func(context.Context, string) (core.ChildPage, error) {
				return core.ChildPage{Children: []core.ChildSpec{{Key: "a", Queue: q + "c"}, {Key: "b", Queue: q + "c"}}, Done: true}, nil
			},
			CompleteParent: true,
		})
		must(err)
		return claim(q+"c", 2)
	}
	for _, q := range []string{"mp", "mq"} {
		cs := members(q)
		if q == "mq" {
			cs[1].BarrierID = uuid.Nil
		}
		_, err = s.CompleteMany(ctx, []core.Completion{{Claim: cs[0], Result: json.RawMessage(`1`)}, {Claim: cs[1], Result: json.RawMessage(`2`)}})
		must(err)
	}

	// A batch's outcomes in one transaction: completed, failed, released,
	// and a claim lost among them.
	_, err = s.Enqueue(ctx, core.ItemSpec{Queue: "mfin"}, core.ItemSpec{Queue: "mfin"}, core.ItemSpec{Queue: "mfin"}, core.ItemSpec{Queue: "mfin"})
	must(err)
	cs = claim("mfin", 4)
	must(s.Cancel(ctx, cs[3].ID))
	_, err = s.FinishMany(ctx, []core.Finish{
		{Claim: cs[0], Result: json.RawMessage(`1`)},
		{Claim: cs[1], Outcome: core.FinishFail, Fail: core.FailParams{Error: "x"}},
		{Claim: cs[2], Outcome: core.FinishRelease},
		{Claim: cs[3], Outcome: core.FinishFail, Fail: core.FailParams{Error: "lost"}},
	})
	must(err)

	// A claim with attempt limits: it lowers the stored limit of its kind.
	_, err = s.Enqueue(ctx, core.ItemSpec{Queue: "ml", Kind: "a"})
	must(err)
	cs, err = s.Claim(ctx, core.ClaimParams{Queue: "ml", Owner: owner, Limit: 1, Lease: time.Minute, MaxAttempts: map[string]int{"a": 3, "b": 4}})
	must(err)
	if len(cs) != 1 || cs[0].MaxAttempts != 3 {
		t.Fatalf("claim with kind limits: %+v, want one claim of MaxAttempts 3", cs)
	}
	must(s.Complete(ctx, cs[0], nil))

	// A claim with a deadline: its fence and completion check it.
	_, err = s.Enqueue(ctx, core.ItemSpec{Queue: "mw"}, core.ItemSpec{Queue: "mw"})
	must(err)
	cs = claim("mw", 2)
	for i := range cs {
		cs[i].Within = time.Minute
	}
	held, err := s.Fence(ctx, cs[0], func(ctx context.Context, f *core.Fenced) error { return f.Complete(ctx, nil) })
	if !held || err != nil {
		t.Fatalf("fence within its deadline: held %v, %v", held, err)
	}
	must(s.Complete(ctx, cs[1], nil))

	// A barrier whose child key comes twice, then fires: its join is made.
	// A FailBarrier one whose failed child is revived, fails again, and
	// fires: its join is made dead.
	_, err = s.Enqueue(ctx, core.ItemSpec{Queue: "mp"})
	must(err)
	parent := claim("mp", 1)[0]
	held, err = s.Fence(ctx, parent, func(ctx context.Context, f *core.Fenced) error {
		b, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: "twice", Join: core.JoinSpec{Queue: "mj"}})
		if err != nil {
			return err
		}
		if _, err := f.AddChildren(ctx, core.AddChildrenParams{Barrier: b.ID, To: "1", Children: []core.ChildSpec{{Key: "k", Queue: "mc"}}}); err != nil {
			return err
		}
		if _, err := f.AddChildren(ctx, core.AddChildrenParams{Barrier: b.ID, From: "1", To: "2", Children: []core.ChildSpec{{Key: "k", Queue: "mc"}}}); err != nil {
			return err
		}
		if _, err := f.Seal(ctx, b.ID); err != nil {
			return err
		}
		fb, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: "fails", Join: core.JoinSpec{Queue: "mj"}, OnChildFailure: core.FailBarrier})
		if err != nil {
			return err
		}
		if _, err := f.AddChildren(ctx, core.AddChildrenParams{Barrier: fb.ID, To: "1", Children: []core.ChildSpec{{Key: "a", Queue: "mf"}}}); err != nil {
			return err
		}
		if _, err := f.Seal(ctx, fb.ID); err != nil {
			return err
		}
		return f.Complete(ctx, nil)
	})
	if !held {
		t.Fatal("fence not held")
	}
	must(err)
	must(s.Complete(ctx, claim("mc", 1)[0], json.RawMessage(`"c"`)))
	failing := claim("mf", 1)[0]
	_, err = s.Fail(ctx, failing, core.FailParams{Discard: true})
	must(err)
	must(s.Revive(ctx, failing.ID))
	_, err = s.Fail(ctx, claim("mf", 1)[0], core.FailParams{Discard: true})
	must(err)
	for _, j := range claim("mj", 1) { // the dead join is not claimable
		must(s.Complete(ctx, j, nil))
	}

	// A claim timing out on its last attempt on a live owner: dead.
	_, err = s.Enqueue(ctx, core.ItemSpec{Queue: "mt", MaxAttempts: 1})
	must(err)
	claim("mt", 1)
	must(reaper.Heartbeat(ctx, owner))
	_, err = reaper.Reap(ctx, core.ReapParams{StaleAfter: 10 * time.Hour})
	must(err)

	// Claims of an owner that died: one crash retried, then dead.
	_, err = s.Enqueue(ctx, core.ItemSpec{Queue: "mk"})
	must(err)
	for _, maxCrashes := range []int{3, 1} {
		dying, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{})
		must(err)
		// On the reaper's clock: the crash makes the item available then.
		if cs, err := reaper.Claim(ctx, core.ClaimParams{Queue: "mk", Owner: dying, Limit: 1, Lease: time.Minute}); err != nil || len(cs) != 1 {
			t.Fatalf("claimed %d, %v", len(cs), err)
		}
		must(reaper.Heartbeat(ctx, owner))
		_, err = reaper.Reap(ctx, core.ReapParams{StaleAfter: time.Hour, MaxCrashes: maxCrashes})
		must(err)
	}

	// The fired barriers are old to the reaper's clock.
	_, err = reaper.Purge(ctx, core.PurgeParams{OlderThan: time.Hour})
	must(err)
}
