package core

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
	"github.com/plenumdb/plenum/migrations"
)

// Get returns the item with the given id, or ErrNotFound.
func (s *Store) Get(ctx context.Context, id uuid.UUID) (Item, error) {
	var it Item
	err := s.read(ctx, "get", func() (err error) {
		it, err = scanItem(s.d, s.db.QueryRowContext(ctx, s.sql(qItemGet), s.d.UUID(id)))
		return err
	})
	if sqlkit.IsNoRows(err) {
		return Item{}, fmt.Errorf("plenum: get %s: %w", id, ErrNotFound)
	}
	return it, err
}

// Cancel cancels the item: it will not run again, and a holder of its claim
// loses it (the holder's fenced writes are refused from then on). A
// cancelled item counts as a failed arrival at its barrier. Cancelling a
// cancelled item does nothing; a completed or dead one gives ErrFinished.
func (s *Store) Cancel(ctx context.Context, id uuid.UUID) error {
	return s.inTx(ctx, "cancel", func(tx dialect.Tx) error {
		state, barrier, err := s.lockItem(ctx, tx, id)
		if err != nil {
			return err
		}
		switch state {
		case StateCancelled:
			return nil
		case StateCompleted, StateDead:
			return fmt.Errorf("plenum: cancel %s (%s): %w", id, state, ErrFinished)
		}
		if _, err := tx.ExecContext(ctx, s.sql(qItemCancel), s.d.UUID(id)); err != nil {
			return err
		}
		return s.settle(ctx, tx, []arrival{{barrier: barrier, failed: 1}})
	})
}

// Revive makes a dead item available again now, with its attempts and
// crashes reset. If its barrier has not fired, the failure it counted there
// is taken back, so that the revived item can arrive; if the barrier already
// fired, the item leaves it.
func (s *Store) Revive(ctx context.Context, id uuid.UUID) error {
	return s.inTx(ctx, "revive", func(tx dialect.Tx) error { return s.revive(ctx, tx, id) })
}

// revive is Revive in tx.
func (s *Store) revive(ctx context.Context, tx dialect.Querier, id uuid.UUID) error {
	state, barrier, err := s.lockItem(ctx, tx, id)
	if err != nil {
		return err
	}
	if state != StateDead {
		return fmt.Errorf("plenum: revive %s (%s): %w", id, state, ErrNotDead)
	}
	keep := barrier
	if barrier != uuid.Nil {
		res, err := tx.ExecContext(ctx, s.sql(qBarrierUnfail), s.d.UUID(barrier))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			keep = uuid.Nil
		}
	}
	if _, err = tx.ExecContext(ctx, s.sql(qItemRevive), nullUUID(s.d, keep), s.d.UUID(id)); err != nil {
		return err
	}
	return s.reviveLanes(ctx, tx, qItemLane, s.d.UUID(id))
}

func (s *Store) lockItem(ctx context.Context, tx dialect.Querier, id uuid.UUID) (State, uuid.UUID, error) {
	var state string
	var barrier uuid.NullUUID
	err := tx.QueryRowContext(ctx, s.sql(qItemLock), s.d.UUID(id)).Scan(&state, &barrier)
	if sqlkit.IsNoRows(err) {
		return "", uuid.Nil, fmt.Errorf("plenum: %s: %w", id, ErrNotFound)
	}
	return State(state), barrier.UUID, err
}

// Counts returns how many items of queue are in each state ("" counts all
// queues).
func (s *Store) Counts(ctx context.Context, queue string) (map[State]int64, error) {
	if err := lookupName("queue", queue, migrations.MaxQueueLen, false); err != nil {
		return nil, err
	}
	q, args := qCountsAll, []any(nil)
	if queue != "" {
		q, args = qCountsQueue, []any{queue}
	}
	var out map[State]int64
	err := s.read(ctx, "counts", func() error {
		rows, err := s.db.QueryContext(ctx, s.sql(q), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		out = map[State]int64{}
		for rows.Next() {
			var st string
			var n int64
			if err := rows.Scan(&st, &n); err != nil {
				return err
			}
			out[State(st)] = n
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
