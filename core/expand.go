package core

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/plenumdb/plenum/internal/fault"
)

// ChildPage is one batch of children from an ExpandParams.Next source.
type ChildPage struct {
	Children []ChildSpec
	// Next is the cursor after this page, saved with it: valid UTF-8
	// without NUL bytes, at most MaxCursorBytes (a source that needs bytes
	// can encode them, e.g. in base64).
	Next string
	// Done is set on the last page; the barrier is sealed with it.
	Done bool
}

// ExpandParams describe a streaming fan-out.
type ExpandParams struct {
	Barrier BarrierSpec
	// Next returns the page of children that starts at cursor ("" for the
	// first). It runs outside any transaction, and must return the same
	// page for the same cursor: after a crash, dispatch resumes from the
	// last saved cursor, and keys make a repeated page harmless.
	Next func(ctx context.Context, cursor string) (ChildPage, error)
	// CompleteParent completes the parent item, with Result, in the
	// transaction that seals the barrier: the barrier's join then takes
	// the parent's place at the barrier the parent reports to. Without
	// it the parent stays a member there, and that barrier waits for the
	// parent and the join both (see Fenced.Seal).
	CompleteParent bool
	Result         json.RawMessage
}

// ExpandResult reports what an Expand did.
type ExpandResult struct {
	Barrier Barrier
	// Inserted counts children this call inserted (not those a crashed
	// earlier dispatch had already inserted).
	Inserted int
	// Batches counts the pages this call committed.
	Batches int
	// Fired is true when sealing fired the barrier (all children were
	// already finished, or there were none).
	Fired bool
}

// Expand fans the claimed parent out into children, page by page, each page
// in its own fenced transaction that also saves the dispatch cursor; the
// last page seals the barrier (and, if asked, completes the parent). Run it
// again after a crash, with the parent claimed again: it finds the barrier,
// resumes from the saved cursor, and creates no duplicates. A lost claim
// gives ErrClaimLost; what was committed before stays, for the next holder
// to resume.
func (s *Store) Expand(ctx context.Context, c Claim, p ExpandParams) (ExpandResult, error) {
	if p.Next == nil {
		return ExpandResult{}, invalid("Next", "nil source")
	}
	if err := s.validJSON("Result", p.Result); err != nil {
		return ExpandResult{}, err
	}
	var r ExpandResult
	held, err := s.Fence(ctx, c, func(ctx context.Context, f *Fenced) error {
		var err error
		r.Barrier, err = f.OpenBarrier(ctx, p.Barrier)
		return err
	})
	if err := lostOr(held, err, c); err != nil {
		return r, err
	}
	cursor := r.Barrier.Cursor
	if r.Barrier.Sealed {
		if p.CompleteParent {
			held, err := s.Fence(ctx, c, func(ctx context.Context, f *Fenced) error { return f.Complete(ctx, p.Result) })
			return r, lostOr(held, err, c)
		}
		return r, nil
	}
	for {
		page, err := p.Next(ctx, cursor)
		if err != nil {
			return r, fmt.Errorf("plenum: expand %s: source at cursor %q: %w", c.ID, cursor, err)
		}
		if err := validText("ChildPage.Next", page.Next, MaxCursorBytes); err != nil {
			return r, err
		}
		var inserted int
		var fired bool
		held, err := s.Fence(ctx, c, func(ctx context.Context, f *Fenced) error {
			var err error
			inserted, err = f.AddChildren(ctx, AddChildrenParams{Barrier: r.Barrier.ID, From: cursor, To: page.Next, Children: page.Children})
			if err != nil || !page.Done {
				return err
			}
			if fired, err = f.seal(ctx, r.Barrier.ID, p.CompleteParent); err != nil {
				return err
			}
			if p.CompleteParent {
				return f.Complete(ctx, p.Result)
			}
			return nil
		})
		if err := lostOr(held, err, c); err != nil {
			return r, err
		}
		r.Inserted += inserted
		r.Batches++
		cursor = page.Next
		if page.Done {
			r.Fired = fired
			r.Barrier, err = s.GetBarrier(ctx, r.Barrier.ID)
			return r, err
		}
		if err := fault.Hit(ctx, fault.DispatchBetweenPages); err != nil {
			return r, err
		}
	}
}

func lostOr(held bool, err error, c Claim) error {
	if err != nil {
		return err
	}
	if !held {
		return fmt.Errorf("plenum: expand %s: %w", c.ID, ErrClaimLost)
	}
	return nil
}
