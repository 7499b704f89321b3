package conformance

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// FinishMany: one transaction ends a batch's claims each its own way
// (completed, failed and retried, dead, released), each fenced on its own
// claim: a lost claim changes nothing and leaves the others to finish,
// each failed attempt leaves its row in its item's history, finishing
// again changes nothing, and one claim past its deadline refuses the
// whole batch.
func testFinishMany(e *env) {
	const queue = "finish-many"
	res := e.enqueue(e.s,
		core.ItemSpec{Queue: queue, Priority: 0},
		core.ItemSpec{Queue: queue, Priority: 1, MaxAttempts: 3},
		core.ItemSpec{Queue: queue, Priority: 2, MaxAttempts: 1},
		core.ItemSpec{Queue: queue, Priority: 3},
		core.ItemSpec{Queue: queue, Priority: 4},
	)
	owner := e.owner(e.s)
	byID := map[uuid.UUID]core.Claim{}
	for _, c := range e.claimAll(e.s, owner, queue, len(res)) {
		byID[c.ID] = c
	}
	claim := func(i int) core.Claim { return byID[res[i].ID] }
	// The last item's claim is lost: cancelled meanwhile.
	if err := e.s.Cancel(e.ctx, res[4].ID); err != nil {
		e.t.Fatalf("Cancel: %v", err)
	}
	fs := []core.Finish{
		{Claim: claim(0), Result: json.RawMessage(`{"sent":true}`)},
		{Claim: claim(1), Outcome: core.FinishFail, Fail: core.FailParams{Error: "try later", RetryIn: time.Hour}},
		{Claim: claim(2), Outcome: core.FinishFail, Fail: core.FailParams{Error: "bounced"}},
		{Claim: claim(3), Outcome: core.FinishRelease, Delay: time.Hour},
		{Claim: claim(4), Result: json.RawMessage(`1`)},
	}
	got, err := e.s.FinishMany(e.ctx, fs)
	if err != nil {
		e.t.Fatalf("FinishMany: %v", err)
	}
	want := []core.Finished{{}, {}, {Dead: true}, {}, {Lost: true}}
	for i := range want {
		if got[i] != want[i] {
			e.t.Errorf("FinishMany[%d] (%s) = %+v, want %+v", i, fs[i].Outcome, got[i], want[i])
		}
	}
	if it := e.get(res[0].ID); it.State != core.StateCompleted || !jsonEqual(it.Result, []byte(`{"sent":true}`)) {
		e.t.Errorf("completed item: %s with result %s, want completed with its result", it.State, it.Result)
	}
	if it := e.get(res[1].ID); it.State != core.StateAvailable || it.Attempt != 1 || it.LastError != "try later" {
		e.t.Errorf("failed item: %s, attempt %d, error %q; want available, attempt 1, its error", it.State, it.Attempt, it.LastError)
	}
	if it := e.get(res[2].ID); it.State != core.StateDead || it.LastError != "bounced" {
		e.t.Errorf("dead item: %s, error %q; want dead with its error", it.State, it.LastError)
	}
	if it := e.get(res[3].ID); it.State != core.StateAvailable || it.LastError != "" {
		e.t.Errorf("released item: %s, error %q; want available with no error", it.State, it.LastError)
	}
	if it := e.get(res[4].ID); it.State != core.StateCancelled {
		e.t.Errorf("lost item: %s, want cancelled still", it.State)
	}
	e.wantHistory(res[1].ID, "1 failed try later")
	e.wantHistory(res[2].ID, "1 failed bounced")
	e.wantHistory(res[3].ID)
	e.wantHistory(res[0].ID)

	// Again, with the same claims: the completion counts as done, every
	// other claim is gone, and nothing changes.
	again, err := e.s.FinishMany(e.ctx, fs)
	if err != nil {
		e.t.Fatalf("FinishMany again: %v", err)
	}
	for i, f := range again {
		if f.Lost != (i != 0) || f.Dead {
			e.t.Errorf("FinishMany again [%d] = %+v, want lost for all but the completed item", i, f)
		}
	}
	e.wantHistory(res[1].ID, "1 failed try later")

	// All or nothing: one claim past its deadline refuses the batch.
	late := e.enqueue(e.s, core.ItemSpec{Queue: queue + "-late"}, core.ItemSpec{Queue: queue + "-late"})
	cs := e.claimAll(e.s, owner, queue+"-late", 2)
	cs[1].Within = time.Second
	_, err = e.at(time.Hour).FinishMany(e.ctx, []core.Finish{
		{Claim: cs[0], Outcome: core.FinishFail, Fail: core.FailParams{Error: "x"}},
		{Claim: cs[1]},
	})
	if !errors.Is(err, core.ErrPastDeadline) {
		e.t.Fatalf("FinishMany with a claim past its deadline: %v, want ErrPastDeadline", err)
	}
	for _, r := range late {
		if it := e.get(r.ID); it.State != core.StateClaimed || it.Attempt != 1 {
			e.t.Errorf("item of the refused batch: %s, attempt %d; want still claimed", it.State, it.Attempt)
		}
		e.wantHistory(r.ID)
	}
}
