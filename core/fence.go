package core

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/fault"
)

// Fence runs fn in one transaction that holds the item's row lock, only if c
// is still the item's claim. It returns held == false, and no error, when
// the claim was lost: the expected outcome of a race (the item was reaped
// and claimed again, or cancelled), not a failure, and nothing was done.
// Only c's own loss is reported that way: an error of fn's that wraps
// ErrClaimLost about another item is returned, with held == true.
//
// fn gets a handle bound to the transaction: complete the item, enqueue,
// open barriers and add children, and run the caller's own statements
// through it, never through the store (which would wait on the lock the
// fence holds). Everything fn writes through the handle commits together
// with the fence check, or not at all: that is what makes effects
// exactly-once under at-least-once delivery. When the transaction fails with
// a transient error it is rolled back and fn runs again, so fn must touch
// nothing but the handle. An error from fn rolls everything back and is
// returned with held == true.
//
// After ErrCommitUnknown, a fence that completed the item can be recognised
// with Get: State completed and ClaimToken equal to c.Token mean it
// committed, together with everything fn wrote. A fence run again on such an
// item returns held == false, as for any claim that is no longer held.
//
// The token compared is c.Token, captured at claim time, not anything read
// again, so a fence entered after a rolled-back attempt still recognises a
// claim that is really held, and a claim that moved on is never mistaken for
// one's own. Fences check the token, not the lease clock, unless c carries
// a deadline (Claim.Within): past it, on the database clock and checked in
// the fence's own transaction with the row locked, the fence returns
// held == true and an error wrapping ErrPastDeadline, fn does not run and
// nothing commits, whatever ctx is.
//
// The context fn gets is marked: a store method that would open a
// transaction of its own on this database, called with it (or a context
// derived from it), returns ErrInsideFence at once instead of waiting on
// the fence's lock.
func (s *Store) Fence(ctx context.Context, c Claim, fn func(ctx context.Context, f *Fenced) error) (held bool, err error) {
	if fn == nil {
		return false, invalid("fn", "nil function")
	}
	if err := validClaim("Claim", c); err != nil {
		return false, err
	}
	// lost is the last attempt's own loss: the fenced claim's, found by
	// the fence's check or by the handle's Complete. A claim lost that fn
	// reports about any other item is fn's error like any other.
	var lost bool
	err = s.inTx(ctx, "fence", func(tx dialect.Tx) error {
		lost = false
		h, err := s.lockClaim(ctx, tx, c)
		if err != nil {
			lost = errors.Is(err, ErrClaimLost)
			return err
		}
		f := &Fenced{s: s, tx: tx, c: c, h: h}
		err = fn(markFence(ctx, s.db), f)
		lost = err != nil && f.lost
		if err == nil {
			err = fault.Hit(ctx, fault.FenceBeforeCommit)
		}
		return err
	})
	if lost {
		return false, nil
	}
	return true, err
}

// Fenced is the handle a Fence passes to its function: every method runs in
// the fence's transaction. It must not be kept after the function returns.
type Fenced struct {
	s  *Store
	tx dialect.Tx
	c  Claim
	h  held
	// completed is set once the item was completed through this handle.
	completed bool
	// lost is set when Complete found the fenced claim lost.
	lost bool
	// handover is the item's own barrier, once a Seal in this transaction
	// made the sealed barrier's join report there: completing the item
	// in the same transaction hands its place over to the join.
	handover uuid.UUID
	// run is the item's run, once runID has read it.
	run     uuid.UUID
	runRead bool
	// waiting is set once Await put the item into waiting.
	waiting bool
}

// Claim returns the claim the fence holds.
func (f *Fenced) Claim() Claim { return f.c }

// ExecContext runs one of the caller's own statements (in the database's own
// placeholder style) in the fence's transaction.
func (f *Fenced) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return f.tx.ExecContext(ctx, query, args...)
}

// QueryContext runs one of the caller's own queries in the fence's
// transaction.
func (f *Fenced) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return f.tx.QueryContext(ctx, query, args...)
}

// QueryRowContext runs one of the caller's own single-row queries in the
// fence's transaction.
func (f *Fenced) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return f.tx.QueryRowContext(ctx, query, args...)
}

// Complete completes the fenced item with result, in the fence's
// transaction, counting its arrival at its barrier (if it still has one).
func (f *Fenced) Complete(ctx context.Context, result json.RawMessage) error {
	if f.completed {
		return nil
	}
	if err := f.usable("Complete"); err != nil {
		return err
	}
	if err := f.s.validJSON("result", result); err != nil {
		return err
	}
	if f.handover != uuid.Nil {
		if err := f.handOver(ctx); err != nil {
			return err
		}
	}
	lost, err := f.s.complete(ctx, f.tx, []Completion{{Claim: f.c, Result: result}})
	if err != nil {
		return err
	}
	if len(lost) > 0 {
		f.lost = true
		return fmt.Errorf("plenum: complete %s: %w", f.c.ID, ErrClaimLost)
	}
	f.completed = true
	if f.handover != uuid.Nil {
		// A join the seal fired dead may already have counted there.
		if _, err := f.s.tryFire(ctx, f.tx, f.handover); err != nil {
			return err
		}
	}
	return nil
}

// Enqueue inserts items in the fence's transaction: they exist only if the
// fence commits.
func (f *Fenced) Enqueue(ctx context.Context, specs ...ItemSpec) ([]EnqueueResult, error) {
	if err := f.s.validateSpecs(specs); err != nil {
		return nil, err
	}
	if err := f.s.runsExist(ctx, f.tx, specs, specRun); err != nil {
		return nil, err
	}
	return f.s.insertItems(ctx, f.tx, specs, [16]byte{}, "")
}
