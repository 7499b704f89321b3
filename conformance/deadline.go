package conformance

import (
	"context"
	"errors"
	"time"

	"github.com/plenumdb/plenum/core"
)

// Guarantee 2, for a claim with a deadline (Claim.Within, what a runtime
// hands its handlers): past the deadline on the database clock, every
// write under the claim is refused with ErrPastDeadline, whatever context
// it is given, and changes nothing; before it, the claim writes as any
// other; the same claim without a deadline is fenced on its token alone.
func testFenceDeadline(e *env) {
	const queue = "deadline"
	id := e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	other := e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	o := e.owner(e.s)
	cs := e.claimAll(e.s, o, queue, 2)
	c, plain := cs[0], cs[1]
	if c.ID != id {
		c, plain = plain, c
	}
	c.Within = 10 * time.Minute

	// Before the deadline the claim writes: a lease moves.
	if err := e.s.Extend(e.ctx, c, 2*time.Hour); err != nil {
		e.t.Fatalf("Extend within the deadline: %v", err)
	}

	// Past it, on a database clock 20 minutes on, nothing goes through.
	late := e.at(20 * time.Minute)
	before, beforeOther := e.get(id), e.get(other)
	past := func(op string, err error) {
		e.t.Helper()
		if !errors.Is(err, core.ErrPastDeadline) {
			e.t.Errorf("%s past the deadline = %v, want ErrPastDeadline", op, err)
		}
	}
	ran := false
	held, err := late.Fence(e.ctx, c, func(ctx context.Context, f *core.Fenced) error {
		ran = true
		if _, err := f.Enqueue(ctx, core.ItemSpec{Queue: "deadline-effect"}); err != nil {
			return err
		}
		return f.Complete(ctx, []byte(`"late"`))
	})
	past("Fence", err)
	if !held || ran {
		e.t.Errorf("Fence past the deadline: held %v, fn ran %v; want held (the claim is not lost), fn not run", held, ran)
	}
	past("Complete", late.Complete(e.ctx, c, []byte(`"late"`)))
	_, err = late.CompleteMany(e.ctx, []core.Completion{{Claim: plain}, {Claim: c}})
	past("CompleteMany", err)
	_, err = late.Fail(e.ctx, c, core.FailParams{Error: "late"})
	past("Fail", err)
	past("Release", late.Release(e.ctx, c, 0))
	past("Extend", late.Extend(e.ctx, c, time.Hour))
	_, err = late.ExtendMany(e.ctx, []core.Claim{c}, time.Hour)
	past("ExtendMany", err)
	asked, err := e.expandLate(late, c, "deadline")
	past("Expand", err)
	if asked {
		e.t.Errorf("Expand past the deadline asked its source for children")
	}
	if d := itemDiff(before, e.get(id)); d != "" {
		e.t.Errorf("writes past the deadline changed the item: %s", d)
	}
	if d := itemDiff(beforeOther, e.get(other)); d != "" {
		e.t.Errorf("a CompleteMany refused past one claim's deadline changed another item: %s", d)
	}
	for _, q := range []string{"deadline-effect", "deadline-kids", "deadline-join"} {
		if n := e.total(q); n != 0 {
			e.t.Errorf("%d items in %s after writes past the deadline, want none", n, q)
		}
	}
	if h, err := e.s.Attempts(e.ctx, id); err != nil || len(h) != 0 {
		e.t.Errorf("history after writes past the deadline = %v, %v; want none", h, err)
	}

	// The same claim without a deadline is fenced on its token alone, on
	// the same late clock: the guarantee core users rely on is unchanged.
	c.Within = 0
	held, err = late.Fence(e.ctx, c, func(ctx context.Context, f *core.Fenced) error { return f.Complete(ctx, []byte(`"token only"`)) })
	if !held || err != nil {
		e.t.Errorf("Fence without a deadline on the late clock = held %v, %v; want held, nil", held, err)
	}
	if it := e.get(id); it.State != core.StateCompleted {
		e.t.Errorf("after the fence without a deadline: %s, want completed", it.State)
	}

	// A deadline out of range is bad input.
	plain.Within = -time.Second
	var bad *core.InputError
	if _, err := e.s.Fence(e.ctx, plain, func(context.Context, *core.Fenced) error { return nil }); !errors.As(err, &bad) {
		e.t.Errorf("Fence with a negative Within = %v, want an InputError", err)
	}
	if _, err := e.s.CompleteMany(e.ctx, []core.Completion{{Claim: plain}}); !errors.As(err, &bad) {
		e.t.Errorf("CompleteMany with a negative Within = %v, want an InputError", err)
	}
}
