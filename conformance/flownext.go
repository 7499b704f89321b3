package conformance

import (
	"errors"
	"time"

	"github.com/plenumdb/plenum/core"
)

// testFlowNextClaimSince checks the next turn a runtime waits for after a
// short claim: a key whose rate is spent gives it (NextClaimAt), and once
// it has passed, NextClaimAt forgets it while NextClaimSince, asked for
// the time since the claim, still gives it, so that a runtime whose read
// came late claims at once rather than at its next poll.
func testFlowNextClaimSince(e *env) {
	const queue = "flow-next"
	per := 300 * time.Millisecond
	if err := e.s.SetLimit(e.ctx, core.Limit{Queue: queue, Key: "k", Rate: 1, Per: per}); err != nil {
		e.t.Fatalf("SetLimit: %v", err)
	}
	e.enqueue(e.s, flowSpecs(queue, []string{"k"}, 2)...)
	owner := e.owner(e.s)
	sent := time.Now()
	if cs := e.claim(e.s, owner, queue, 2); len(cs) != 1 {
		e.t.Fatalf("claimed %d items of a key with a rate of 1 per %v, want 1", len(cs), per)
	}
	turn, err := e.s.NextClaimAt(e.ctx, queue)
	if err != nil {
		e.t.Fatalf("NextClaimAt: %v", err)
	}
	now, err := e.s.Now(e.ctx)
	if err != nil {
		e.t.Fatalf("Now: %v", err)
	}
	if !turn.After(now) || turn.Sub(now) > per {
		e.t.Fatalf("NextClaimAt = %v at %v, want within the next %v", turn, now, per)
	}
	// Wait for the turn to pass on the database clock.
	for !now.After(turn) {
		time.Sleep(per / 20)
		if now, err = e.s.Now(e.ctx); err != nil {
			e.t.Fatalf("Now: %v", err)
		}
	}
	if at, err := e.s.NextClaimAt(e.ctx, queue); err != nil || !at.IsZero() {
		e.t.Fatalf("NextClaimAt after the turn = %v, %v; want none", at, err)
	}
	if at, err := e.s.NextClaimSince(e.ctx, queue, time.Since(sent)); err != nil || !at.Equal(turn) {
		e.t.Fatalf("NextClaimSince the claim, after the turn = %v, %v; want the turn %v", at, err, turn)
	}
	if cs := e.claim(e.s, owner, queue, 2); len(cs) != 1 {
		e.t.Fatalf("claimed %d items after the key's turn, want 1", len(cs))
	}
	var in *core.InputError
	if _, err := e.s.NextClaimSince(e.ctx, queue, -time.Second); !errors.As(err, &in) {
		e.t.Fatalf("NextClaimSince with a negative time = %v, want an *InputError", err)
	}
}
