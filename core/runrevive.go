package core

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
)

// ReviveRunResult is the outcome of ReviveRun.
type ReviveRunResult struct {
	// Items counts the dead items revived; Barriers the fired barriers
	// re-armed on the way.
	Items, Barriers int
}

// ReviveRun revives a halted run: the run goes back to running (its halt
// fields cleared), and every dead item of the run is revived as Revive
// does (attempts and crashes reset, history kept), without running again
// anything that completed. A dead item whose barrier already fired re-arms
// that barrier (ReviveBarrier) so that its join runs again with the new
// results, and so does a dead join whose barrier has dead children. A
// join that an earlier re-arm replaced stays dead, as history. A run that
// is completed or cancelled gives ErrRunFinished; a running one has its
// dead items revived all the same. Dead items are revived a page at a
// time, each page in its own transaction, in id order, so a call cut
// short can be made again.
//
// The run goes back to running in the transaction of the last page, not
// before: were it running while a dead item still counted as failed at
// its barrier, a sibling finishing in between could fire that barrier on
// the failure about to be revived and halt the run again.
//
// A halted run with no dead item to revive and no item left to run gives
// ErrNothingToRevive and stays halted: set running, it would never move
// again. (Purge keeps every item of a halted run, so this is a run whose
// items were deleted otherwise, or one halted through UpdateRun.)
func (s *Store) ReviveRun(ctx context.Context, run uuid.UUID) (ReviveRunResult, error) {
	var out ReviveRunResult
	err := s.read(ctx, "revive run", func() error {
		r, err := s.GetRun(ctx, run)
		if err == nil && r.State.Final() {
			err = fmt.Errorf("plenum: revive run %s (%s): %w", run, r.State, ErrRunFinished)
		}
		return err
	})
	if err != nil {
		return out, err
	}
	// Items made from here on (a join a re-arm fires at once, dead under
	// FailBarrier) are not this call's to revive: ids are UUIDv7, so the
	// walk stops at the first id made after it began.
	horizon := uuid.Must(uuid.NewV7())
	after := uuid.Nil
	page := s.releaseMax()
	for {
		var ids []uuid.UUID
		err := s.read(ctx, "revive run", func() error {
			ids = ids[:0]
			rows, err := s.db.QueryContext(ctx, s.sql(qDeadPageOfRun(s.d, page)), s.d.UUID(run), s.d.UUID(after))
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var id uuid.UUID
				if err := rows.Scan(&id); err != nil {
					return err
				}
				ids = append(ids, id)
			}
			return rows.Err()
		})
		if err != nil {
			return out, err
		}
		last := len(ids) < page
		for i, id := range ids {
			if bytes.Compare(id[:], horizon[:]) >= 0 {
				ids, last = ids[:i], true
				break
			}
		}
		var items, barriers int
		err = s.inTx(ctx, "revive run", func(tx dialect.Tx) error {
			items, barriers = 0, 0
			for _, id := range ids {
				i, b, err := s.reviveDead(ctx, tx, id)
				if err != nil {
					return err
				}
				items, barriers = items+i, barriers+b
			}
			if last {
				return s.resumeRun(ctx, tx, run, out.Items+items+out.Barriers+barriers > 0)
			}
			return nil
		})
		if err != nil {
			return out, err
		}
		out.Items += items
		out.Barriers += barriers
		if last {
			return out, nil
		}
		after = ids[len(ids)-1]
	}
}

// ReviveRunItem revives one dead item of a run as ReviveRun revives each
// (re-arming its barrier if that fired, so that its failed siblings run
// again too), and brings the run back to running, in one transaction: the
// run's other dead items stay dead. An item of another run, or one that
// is not dead, is ErrNotFound or ErrNotDead; a finished run,
// ErrRunFinished.
func (s *Store) ReviveRunItem(ctx context.Context, run, item uuid.UUID) (ReviveRunResult, error) {
	var out ReviveRunResult
	err := s.inTx(ctx, "revive run item", func(tx dialect.Tx) error {
		state, _, err := s.lockItem(ctx, tx, item)
		if err != nil {
			return err
		}
		var of, id uuid.UUID
		err = tx.QueryRowContext(ctx, s.sql(qRunOfItems(1)), s.d.UUID(item)).Scan(&of, &id)
		switch {
		case sqlkit.IsNoRows(err) || (err == nil && of != run):
			return fmt.Errorf("plenum: revive %s: not an item of run %s: %w", item, run, ErrNotFound)
		case err != nil:
			return err
		case state != StateDead:
			return fmt.Errorf("plenum: revive %s (%s): %w", item, state, ErrNotDead)
		}
		out.Items, out.Barriers, err = s.reviveDead(ctx, tx, item)
		if err != nil {
			return err
		}
		return s.resumeRun(ctx, tx, run, true)
	})
	return out, err
}

// resumeRun brings a halted run back to running, in tx; a run in any other
// state is left as it is, but a finished one is ErrRunFinished. A halted
// run of which nothing was revived (revived false) must still have an
// item to run, or it is ErrNothingToRevive.
func (s *Store) resumeRun(ctx context.Context, tx dialect.Querier, run uuid.UUID, revived bool) error {
	lr, err := s.lockRun(ctx, tx, run)
	if err != nil {
		return err
	}
	if lr.state.Final() {
		return fmt.Errorf("plenum: revive run %s (%s): %w", run, lr.state, ErrRunFinished)
	}
	if lr.state != RunHalted {
		return nil
	}
	if !revived {
		var id uuid.UUID
		err := tx.QueryRowContext(ctx, s.sql(qUnfinishedOfRun(s.d, 1)), s.d.UUID(run)).Scan(&id)
		if sqlkit.IsNoRows(err) {
			return fmt.Errorf("plenum: revive run %s: no dead item to revive and no item left to run: %w", run, ErrNothingToRevive)
		}
		if err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, s.sql(qRunResume), string(RunRunning), s.d.UUID(run))
	return err
}

// reviveDead revives one dead item of a run, if it is still dead, as
// ReviveRun says; it returns the items revived and barriers re-armed. The
// item is locked first, then its barrier (the order every completion takes),
// so that whether the barrier fired cannot change while this decides.
func (s *Store) reviveDead(ctx context.Context, tx dialect.Querier, id uuid.UUID) (int, int, error) {
	state, barrier, err := s.lockItem(ctx, tx, id)
	if errors.Is(err, ErrNotFound) || (err == nil && state != StateDead) {
		return 0, 0, nil // revived on the way, by an earlier re-arm, or purged
	}
	if err != nil {
		return 0, 0, err
	}
	var (
		got                 uuid.UUID
		here, joinOf, joinN uuid.NullUUID
	)
	if err := tx.QueryRowContext(ctx, s.sql(qDeadOfRun), s.d.UUID(id)).Scan(&got, &here, &joinOf, &joinN); err != nil {
		return 0, 0, err
	}
	if joinOf.Valid {
		if joinN.UUID != id {
			return 0, 0, nil // a join an earlier re-arm replaced: history
		}
		if _, failed, err := s.barrierFired(ctx, tx, joinOf.UUID); err != nil {
			return 0, 0, err
		} else if failed > 0 {
			return s.rearm(ctx, tx, joinOf.UUID, 0)
		}
	}
	if barrier != uuid.Nil {
		fired, _, err := s.barrierFired(ctx, tx, barrier)
		if err != nil {
			return 0, 0, err
		}
		if fired {
			return s.rearm(ctx, tx, barrier, 0)
		}
	}
	if err := s.revive(ctx, tx, id); err != nil {
		return 0, 0, err
	}
	return 1, 0, nil
}

func (s *Store) barrierFired(ctx context.Context, tx dialect.Querier, id uuid.UUID) (bool, int64, error) {
	var fired int
	var failed int64
	err := tx.QueryRowContext(ctx, s.sql(qBarrierFiredAt), s.d.UUID(id)).Scan(&fired, &failed)
	if sqlkit.IsNoRows(err) {
		return false, 0, fmt.Errorf("plenum: barrier %s: %w", id, ErrNotFound)
	}
	return fired == 1, failed, err
}

// ReviveBarrierResult is the outcome of ReviveBarrier.
type ReviveBarrierResult struct {
	// Children counts the dead or cancelled children revived, at this
	// barrier and at those re-armed above it.
	Children int
	// Barriers counts the barriers re-armed: this one and those above it
	// that had fired.
	Barriers int
}

// ReviveBarrier re-arms a barrier that fired, so that its join runs again
// with new results: its dead and cancelled children are revived (attempts
// and crashes reset, history kept) and taken off its failed count, it is
// unfired, and its generation grows by one (Barrier.Generation: a join's
// own idempotency keys include it, so the second join's never collide
// with the first's). A barrier with no dead or cancelled child fires again
// at once: its join runs again with the same results. The first join must
// be dead or cancelled: one that completed has had its effects
// (ErrFinished), one that has not finished must be cancelled first. It
// leaves the barrier above, where the next join takes its place; if that
// barrier fired too, it is re-armed in the same way, up the chain.
// Everything happens in one transaction. A barrier that has not fired is
// ErrNotFired; one of a finished run, ErrRunFinished.
//
// Children that are themselves joins of fired barriers below are revived
// as plain items: their join runs again with what those barriers hold.
func (s *Store) ReviveBarrier(ctx context.Context, barrier uuid.UUID) (ReviveBarrierResult, error) {
	var out ReviveBarrierResult
	err := s.inTx(ctx, "revive barrier", func(tx dialect.Tx) error {
		var err error
		out.Children, out.Barriers, err = s.rearm(ctx, tx, barrier, 0)
		return err
	})
	return out, err
}

// rearm re-arms barrier x as ReviveBarrier says, in tx: it returns the
// children revived and the barriers re-armed. leaving counts the failures
// of joins below that left x in this transaction, taken back with the
// revived children's before x may fire again.
func (s *Store) rearm(ctx context.Context, tx dialect.Querier, x uuid.UUID, leaving int64) (int, int, error) {
	var (
		fired     = timeValue{d: s.d}
		join, run uuid.NullUUID
		children  int
		rearmed   = 1
	)
	err := tx.QueryRowContext(ctx, s.sql(qReviveLockBarrier), s.d.UUID(x)).Scan(&fired, &join, &run)
	if sqlkit.IsNoRows(err) {
		return 0, 0, fmt.Errorf("plenum: barrier %s: %w", x, ErrNotFound)
	}
	if err != nil {
		return 0, 0, err
	}
	if fired.t.IsZero() || !join.Valid {
		return 0, 0, fmt.Errorf("plenum: revive barrier %s: %w", x, ErrNotFired)
	}
	if run.Valid {
		lr, err := s.lockRun(ctx, tx, run.UUID)
		if err != nil {
			return 0, 0, err
		}
		if lr.state.Final() {
			return 0, 0, fmt.Errorf("plenum: revive barrier %s of run %s (%s): %w", x, run.UUID, lr.state, ErrRunFinished)
		}
	}
	state, above, err := s.lockItem(ctx, tx, join.UUID)
	if err != nil {
		return 0, 0, err
	}
	switch state {
	case StateDead, StateCancelled:
	case StateCompleted:
		return 0, 0, fmt.Errorf("plenum: revive barrier %s: its join %s completed: %w", x, join.UUID, ErrFinished)
	default:
		return 0, 0, invalid("barrier", "the join %s of barrier %s is %s: cancel it before re-arming the barrier", join.UUID, x, state)
	}
	if above != uuid.Nil {
		// The old join leaves the barrier above, taking back the failure
		// it counted there; the next join takes its place.
		if _, err := tx.ExecContext(ctx, s.sql(qItemLeaveBarrier), s.d.UUID(join.UUID)); err != nil {
			return 0, 0, err
		}
		res, err := tx.ExecContext(ctx, s.sql(qBarrierUnfail), s.d.UUID(above))
		if err != nil {
			return 0, 0, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return 0, 0, err
		} else if n == 0 {
			// The barrier above fired too: re-armed, it takes the old
			// join's failure back with its own revived children's.
			c, b, err := s.rearm(ctx, tx, above, 1)
			if err != nil {
				return 0, 0, err
			}
			children, rearmed = children+c, rearmed+b
		}
	}
	res, err := tx.ExecContext(ctx, s.sql(qReviveChildren), s.d.UUID(x))
	if err != nil {
		return 0, 0, err
	}
	if err := s.reviveLanes(ctx, tx, qBarrierLanes, s.d.UUID(x)); err != nil {
		return 0, 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, 0, err
	}
	if _, err := tx.ExecContext(ctx, s.sql(qBarrierRearm), n+leaving, s.d.UUID(x)); err != nil {
		return 0, 0, err
	}
	if _, err := s.tryFire(ctx, tx, x); err != nil {
		return 0, 0, err
	}
	return children + int(n), rearmed, nil
}
