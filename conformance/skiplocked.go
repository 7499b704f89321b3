package conformance

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/skipprobe"
)

// Guarantee 1: a claim passes over the item another session's open claim
// holds and takes a free one at once, as FOR UPDATE SKIP LOCKED promises
// (some databases parse it and do otherwise); and the store's own proof
// of it, which the migrator and a worker's Start run, holds here.
func testClaimSkipsHeld(e *env) {
	if e.caps.SingleWriter {
		e.t.Skipf("dialect %s runs one write transaction at a time (Capabilities.SingleWriter): no claim ever holds a row while another runs", e.d.Name())
	}
	if err := skipsHeld(e.ctx, e.s, "skips", skipprobe.Wait); err != nil {
		e.t.Fatal(err)
	}
	if err := e.s.ProveSkipLocked(e.ctx); err != nil {
		var sl *dialect.SkipLockedError
		if errors.As(err, &sl) {
			e.t.Fatalf("ProveSkipLocked refused the database: %v", err)
		}
		e.t.Fatalf("ProveSkipLocked: %v", err)
	}
	// The probe cleaned up after itself: only the two items above remain.
	if n := e.total(""); n != 2 {
		e.t.Errorf("%d items after the probe, want the 2 this test enqueued", n)
	}
}

// skipsHeld enqueues two items of queue through s and claims one in a
// first transaction, left open; a claim of one in a second transaction
// must then take the other, within wait. It returns what it saw
// otherwise. Both transactions are rolled back.
func skipsHeld(ctx context.Context, s *core.Store, queue string, wait time.Duration) error {
	var owners [2]uuid.UUID
	for i := range owners {
		o, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{Host: "conformance"})
		if err != nil {
			return fmt.Errorf("RegisterOwner: %w", err)
		}
		owners[i] = o
	}
	if _, err := s.Enqueue(ctx, core.ItemSpec{Queue: queue}, core.ItemSpec{Queue: queue}); err != nil {
		return fmt.Errorf("Enqueue: %w", err)
	}
	params := func(owner uuid.UUID) core.ClaimParams {
		return core.ClaimParams{Queue: queue, Owner: owner, Limit: 1, Lease: time.Hour}
	}
	first, err := s.Begin(ctx)
	if err != nil {
		return fmt.Errorf("Begin the first transaction: %w", err)
	}
	defer first.Rollback()
	held, err := s.ClaimTx(ctx, first, params(owners[0]))
	if err != nil || len(held) != 1 {
		return fmt.Errorf("the first claim of one of two items got %d items, %v", len(held), err)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	second, err := s.Begin(wctx)
	if err != nil {
		return fmt.Errorf("Begin a second transaction while the first is open: %w", err)
	}
	defer second.Rollback()
	took, err := s.ClaimTx(wctx, second, params(owners[1]))
	switch {
	case err != nil && ctx.Err() == nil && wctx.Err() != nil:
		return fmt.Errorf("a second claim did not answer within %v while a first held one of two items: it waited for the held item instead of passing over it (%v)", wait, err)
	case err != nil:
		return fmt.Errorf("a second claim while a first held one of two items: %w", err)
	case len(took) == 1 && took[0].ID == held[0].ID:
		return fmt.Errorf("a second claim took item %s, which a first, open claim holds: two claimers held the same item", took[0].ID)
	case len(took) != 1:
		return fmt.Errorf("a second claim took %d items while a first held one of two and the other was free, want 1", len(took))
	}
	return nil
}
