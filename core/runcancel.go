package core

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
)

// CancelRunResult is the outcome of CancelRun.
type CancelRunResult struct {
	// Items counts the items this call cancelled.
	Items int64
}

// CancelRun cancels a run: the run ends cancelled first (so that what
// follows cannot be undone by its own items), then every unfinished item
// of the run is cancelled, in pages of bounded size, each page in its own
// transaction: a holder of a claim loses it (its fenced writes are refused
// and Store.Lost reports it, so a worker's handler context ends), and each
// item counts as a failure at its barrier. A barrier of a cancelled run
// that fires enqueues its join already cancelled, so no join runs, and an
// Expand of a cancelled item stops at its next batch. Cancelling a
// cancelled run cancels whatever of it is still unfinished (a call cut
// short resumes); a completed run gives ErrRunFinished.
func (s *Store) CancelRun(ctx context.Context, run uuid.UUID) (CancelRunResult, error) {
	var out CancelRunResult
	err := s.inTx(ctx, "cancel run", func(tx dialect.Tx) error {
		lr, err := s.lockRun(ctx, tx, run)
		if err != nil {
			return err
		}
		switch lr.state {
		case RunCompleted:
			return fmt.Errorf("plenum: cancel run %s: %w", run, ErrRunFinished)
		case RunCancelled:
			return nil
		}
		_, err = tx.ExecContext(ctx, s.sql(qRunCancel), s.d.UUID(run))
		return err
	})
	if err != nil {
		return out, err
	}
	// Items made after a page was read (by holders not yet cancelled) are
	// found by a later page: the loop ends when none is left, and nothing
	// of a cancelled run makes new items once its holders are gone.
	page := s.releaseMax()
	for {
		var n int64
		var more bool
		err := s.inTx(ctx, "cancel run", func(tx dialect.Tx) error {
			n, more = 0, false
			rows, err := tx.QueryContext(ctx, s.sql(qUnfinishedOfRun(s.d, page)), s.d.UUID(run))
			if err != nil {
				return err
			}
			var ids []any
			for rows.Next() {
				var id uuid.UUID
				if err := rows.Scan(&id); err != nil {
					rows.Close()
					return err
				}
				ids = append(ids, s.d.UUID(id))
			}
			rows.Close()
			if err := rows.Err(); err != nil || len(ids) == 0 {
				return err
			}
			more = true
			locked, err := tx.QueryContext(ctx, s.sql(qLockUnfinished(len(ids))), ids...)
			if err != nil {
				return err
			}
			var held []reapCandidate
			for locked.Next() {
				var c reapCandidate
				var barrier uuid.NullUUID
				if err := locked.Scan(&c.id, &barrier); err != nil {
					locked.Close()
					return err
				}
				c.barrier = barrier.UUID
				held = append(held, c)
			}
			locked.Close()
			if err := locked.Err(); err != nil || len(held) == 0 {
				return err
			}
			if err := s.updateIDs(ctx, tx, itemCancelSet, nil, held); err != nil {
				return err
			}
			n = int64(len(held))
			return s.settle(ctx, tx, failedAt(held))
		})
		if err != nil {
			return out, err
		}
		out.Items += n
		if !more {
			return out, nil
		}
	}
}
