package core

import (
	"context"

	"github.com/google/uuid"
)

// RevivedRun is the outcome of ReviveRun.
type RevivedRun struct {
	// Items counts the dead items revived; Barriers the fired barriers
	// re-armed on the way.
	Items, Barriers int
}

// ReviveRun revives a halted run: the run goes back to running (its halt
// fields cleared), and every dead item of the run is revived as Revive
// does (attempts and crashes reset, history kept), without running again
// anything that completed. A dead item whose barrier already fired re-arms
// that barrier (ReviveBarrier) so that its join runs again with the new
// results. A run that is not halted gives ErrRunFinished when it is final,
// and changes nothing when it is running.
func (s *Store) ReviveRun(ctx context.Context, run uuid.UUID) (RevivedRun, error) {
	return RevivedRun{}, errNotYet("ReviveRun")
}

// BarrierRevived is the outcome of ReviveBarrier.
type BarrierRevived struct {
	// Children counts the dead or cancelled children revived.
	Children int
	// Generation is the barrier's generation after the re-arm.
	Generation int64
}

// ReviveBarrier re-arms a barrier that fired, so that its join runs again
// with new results: its dead and cancelled children are revived (history
// kept) and taken off its failed count, it is unfired, and its generation
// grows by one (Barrier.Generation: a join's own idempotency keys include
// it, so the second join's never collide with the first's). The first join
// must be dead or cancelled (one that completed has had its effects, and
// ErrFinished is returned); it leaves the barrier above, where the next
// join takes its place. If that barrier fired too, it is re-armed in the
// same way, up the chain. Everything happens in one transaction.
func (s *Store) ReviveBarrier(ctx context.Context, barrier uuid.UUID) (BarrierRevived, error) {
	return BarrierRevived{}, errNotYet("ReviveBarrier")
}
