package core

import (
	"context"
	"encoding/json"
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
// handed over must go to a new item. After a Seal in the same fence, the
// item's place goes to next and the sealed barrier's join keeps its own
// (the barrier above then waits for both).
func (f *Fenced) Then(ctx context.Context, next ItemSpec, result json.RawMessage) (Enqueued, error) {
	return Enqueued{}, errNotYet("Then")
}
