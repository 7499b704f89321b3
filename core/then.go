package core

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
)

// Then completes the fenced item with result and enqueues next in the same
// transaction, handing the item's place at its barrier over to next: next
// reports to the barrier the item reported to, the barrier's expected count
// does not change, and the item's completion counts nowhere. No transaction
// can see the item finished and next not yet there, so the barrier cannot
// fire in between: a chain of steps inside a fan-out counts as one child,
// arriving when its last step finishes.
//
// next.Run defaults to the item's run. A next.Key that an existing item of
// next.Queue holds is an ErrKeyConflict, and nothing changes: the place
// handed over must go to a new item. With next.KeyStates, a holder outside
// those states gives its key up first (ItemSpec.KeyStates), and next is
// new. After a Seal in the same fence, the
// item's place goes to next and the sealed barrier's join keeps its own
// (the barrier above then waits for both).
func (f *Fenced) Then(ctx context.Context, next ItemSpec, result json.RawMessage) (EnqueueResult, error) {
	s := f.s
	if err := f.usable("Then"); err != nil {
		return EnqueueResult{}, err
	}
	if f.completed {
		return EnqueueResult{}, invalid("Then", "the fenced item was already completed in this fence")
	}
	if err := s.validJSON("result", result); err != nil {
		return EnqueueResult{}, err
	}
	specs := []ItemSpec{next}
	if err := s.validateSpecs(specs); err != nil {
		return EnqueueResult{}, err
	}
	if specs[0].Run == uuid.Nil {
		run, err := f.runID(ctx)
		if err != nil {
			return EnqueueResult{}, err
		}
		specs[0].Run = run
	} else if err := s.runsExist(ctx, f.tx, specs, func(int) string { return "next.Run" }); err != nil {
		return EnqueueResult{}, err
	}
	var own uuid.NullUUID
	if err := f.tx.QueryRowContext(ctx, s.sql(qItemBarrier), s.d.UUID(f.c.ID)).Scan(&own); err != nil {
		return EnqueueResult{}, err
	}
	if own.Valid {
		// The item leaves first, so that its completion counts nowhere:
		// its place, and the expected count it held, go to next.
		if _, err := f.tx.ExecContext(ctx, s.sql(qItemLeaveBarrier), s.d.UUID(f.c.ID)); err != nil {
			return EnqueueResult{}, err
		}
	}
	lost, err := s.complete(ctx, f.tx, []Completion{{Claim: f.c, Result: result}})
	if err != nil {
		return EnqueueResult{}, err
	}
	if len(lost) > 0 {
		f.lost = true
		return EnqueueResult{}, fmt.Errorf("plenum: then %s: %w", f.c.ID, ErrClaimLost)
	}
	out, err := s.insertItems(ctx, f.tx, specs, own.UUID, "")
	if err != nil {
		return EnqueueResult{}, err
	}
	if out[0].Existed {
		return EnqueueResult{}, fmt.Errorf("plenum: then %s: key %q of queue %q is held by item %s: %w", f.c.ID, next.Key, next.Queue, out[0].ID, ErrKeyConflict)
	}
	// A Seal in this fence already counted its join above: next takes only
	// the item's own place.
	f.completed, f.handover = true, uuid.Nil
	return out[0], nil
}

// usable refuses a handle whose item waits (Await gave its claim back).
func (f *Fenced) usable(op string) error {
	if f.waiting {
		return invalid(op, "the fenced item waits for a signal (Await): its claim was given back")
	}
	return nil
}
