package storeworkload

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
)

// workloadRuns reaches, after workloadMore on the same tables, the paths of
// runs: creating one (and again by key), waiting for a signal (with a
// deadline, without, again, timed out), signals (new, sent again, taken),
// chain handover, halts (asked for, and by a death), revive of a run
// (an item, and a fired barrier re-armed), ReviveBarrier, updates of a
// run's state, and a cancel by run whose barrier fires a cancelled join.
// It uses stores at clock offsets 0 and 4h only.
func workloadRuns(t *testing.T, db *sql.DB, d dialect.Dialect) {
	ctx := context.Background()
	must := fatal(t)
	s := open(t, db, d, core.Options{})
	later := open(t, db, d, core.Options{ClockOffset: 4 * time.Hour})
	owner, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{})
	must(err)
	claimOn := func(st *core.Store, queue string) core.Claim {
		t.Helper()
		cs, err := st.Claim(ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: 1, Lease: time.Minute})
		must(err)
		if len(cs) != 1 {
			t.Fatalf("claimed %d of %q, want 1", len(cs), queue)
		}
		return cs[0]
	}
	claim := func(queue string) core.Claim { t.Helper(); return claimOn(s, queue) }
	fence := func(c core.Claim, fn func(context.Context, *core.Fenced) error) {
		t.Helper()
		held, err := s.Fence(ctx, c, fn)
		must(err)
		if !held {
			t.Fatalf("fence on %s not held", c.ID)
		}
	}
	awaitOn := func(st *core.Store, c core.Claim, p core.AwaitParams, want string) {
		t.Helper()
		held, err := st.Fence(ctx, c, func(ctx context.Context, f *core.Fenced) error {
			r, err := f.Await(ctx, p)
			if err != nil {
				return err
			}
			got := map[bool]string{true: "signal"}[r.Signal != nil] + map[bool]string{true: "timeout"}[r.TimedOut] + map[bool]string{true: "waiting"}[r.Waiting]
			if got != want {
				t.Fatalf("Await(%+v) = %+v, want %s", p, r, want)
			}
			return nil
		})
		if err != nil || !held {
			t.Fatalf("fence of Await: %v, %v", held, err)
		}
	}
	await := func(c core.Claim, p core.AwaitParams, want string) { t.Helper(); awaitOn(s, c, p, want) }

	rc, _, err := s.CreateRun(ctx, core.RunSpec{Name: "w", Key: "k", OnHalt: &core.HaltItem{Queue: "rh"}},
		core.ItemSpec{Queue: "ra"}, core.ItemSpec{Queue: "ra2"}, core.ItemSpec{Queue: "rb"})
	must(err)
	if again, _, err := s.CreateRun(ctx, core.RunSpec{Name: "w", Key: "k"}); err != nil || !again.Existed {
		t.Fatalf("CreateRun again = %+v, %v", again, err)
	}
	run := rc.ID

	// A waits with a deadline, is woken by a signal, which B takes first;
	// A waits again with its deadline, and later times out.
	a := claim("ra")
	await(a, core.AwaitParams{Name: "go", Timeout: time.Hour}, "waiting")
	sent, err := s.Signal(ctx, core.SignalSpec{Run: run, Name: "go", Key: "1", Payload: json.RawMessage(`{"ok":1}`)})
	must(err)
	if sent.Woken != 1 {
		t.Fatalf("Signal woke %d, want 1", sent.Woken)
	}
	_, err = s.Signal(ctx, core.SignalSpec{Run: run, Name: "go", Key: "1"})
	must(err)
	b := claim("ra2")
	await(b, core.AwaitParams{Name: "go"}, "signal")
	a = claim("ra")
	await(a, core.AwaitParams{Name: "go", Timeout: time.Hour}, "waiting")
	awaitOn(later, claimOn(later, "ra"), core.AwaitParams{Name: "go"}, "timeout")
	// C waits with no deadline, and is cancelled with the run below.
	c := claim("rb")
	await(c, core.AwaitParams{Name: "never"}, "waiting")

	// B hands its place over to its next step, which asks for a halt;
	// the run is revived, and finished through a fence.
	fence(b, func(ctx context.Context, f *core.Fenced) error {
		_, err := f.Then(ctx, core.ItemSpec{Queue: "rn"}, json.RawMessage(`1`))
		return err
	})
	n := claim("rn")
	fence(n, func(ctx context.Context, f *core.Fenced) error {
		_, err := f.Halt(ctx, core.HaltParams{Reason: "no_route", Detail: "d"})
		return err
	})
	if _, err := s.ReviveRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	n = claim("rn")
	fence(n, func(ctx context.Context, f *core.Fenced) error {
		if _, _, err := f.UpdateRun(ctx, core.RunUpdate{Run: run, From: []core.RunState{core.RunRunning}, To: core.RunWaiting}); err != nil {
			return err
		}
		return f.Complete(ctx, nil)
	})
	_, _, err = s.UpdateRun(ctx, core.RunUpdate{Run: run, From: []core.RunState{core.RunWaiting}, To: core.RunHalted, HaltReason: "r"})
	must(err)
	_, _, err = s.UpdateRun(ctx, core.RunUpdate{Run: run, From: []core.RunState{core.RunHalted}, To: core.RunRunning})
	must(err)
	_, err = s.GetRun(ctx, run)
	must(err)
	_, err = s.RunItems(ctx, core.RunItemsParams{Run: run, Limit: 100})
	must(err)
	_, err = s.Signals(ctx, run)
	must(err)

	// A fan-out in the run: a child dies (halting the run), the other
	// completes, the barrier fires; reviving the run re-arms it. Then
	// ReviveBarrier of a barrier whose join died.
	_, err = s.Enqueue(ctx, core.ItemSpec{Queue: "rp", Run: run})
	must(err)
	r, err := s.Expand(ctx, claim("rp"), core.ExpandParams{
		Barrier: core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "rj"}},
		Next: func(context.Context, string) (core.ChildPage, error) {
			return core.ChildPage{Children: []core.ChildSpec{{Key: "x", Queue: "rk"}, {Key: "y", Queue: "rk"}}, Done: true}, nil
		},
		CompleteParent: true,
	})
	must(err)
	_, err = s.Fail(ctx, claim("rk"), core.FailParams{Error: "boom", Discard: true})
	must(err)
	must(s.Complete(ctx, claim("rk"), nil))
	_, err = s.Fail(ctx, claim("rj"), core.FailParams{Error: "join boom", Discard: true})
	must(err)
	if _, err := s.ReviveRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	must(s.Complete(ctx, claim("rk"), nil))
	_, err = s.Fail(ctx, claim("rj"), core.FailParams{Error: "join boom again", Discard: true})
	must(err)
	if _, err := s.ReviveBarrier(ctx, r.Barrier.ID); err != nil {
		t.Fatal(err)
	}
	must(s.Complete(ctx, claim("rj"), nil))
	_, _, err = s.UpdateRun(ctx, core.RunUpdate{Run: run, From: []core.RunState{core.RunRunning, core.RunHalted}, To: core.RunCompleted, Output: json.RawMessage(`{"done":true}`)})
	must(err)

	// A second run is cancelled while its fan-out waits: the barrier fires
	// a cancelled join.
	rc2, _, err := s.CreateRun(ctx, core.RunSpec{Name: "w2"}, core.ItemSpec{Queue: "rq"})
	must(err)
	_, err = s.Expand(ctx, claim("rq"), core.ExpandParams{
		Barrier: core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "rqj"}},
		Next: func(context.Context, string) (core.ChildPage, error) {
			return core.ChildPage{Children: []core.ChildSpec{{Key: "x", Queue: "rqk"}}, Done: true}, nil
		},
		CompleteParent: true,
	})
	must(err)
	if _, err := s.CancelRun(ctx, rc2.ID); err != nil {
		t.Fatal(err)
	}
	rc3, _, err := s.CreateRun(ctx, core.RunSpec{Name: "w3"})
	must(err)
	_, _, err = s.UpdateRun(ctx, core.RunUpdate{Run: rc3.ID, From: []core.RunState{core.RunRunning}, To: core.RunCancelled})
	must(err)
	if _, err := s.CancelRun(ctx, run); !errors.Is(err, core.ErrRunFinished) {
		t.Fatalf("CancelRun of a completed run = %v", err)
	}
	_ = c
}
