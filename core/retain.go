package core

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/fault"
)

// PurgeParams say what a retention pass deletes.
type PurgeParams struct {
	// OlderThan is the age, on the database clock, past which finished
	// items (by finished_at) and fired barriers (by fired_at) may be
	// deleted. Required: at least MinLease.
	OlderThan time.Duration
	// Limit bounds the barriers and the items one pass deletes (each).
	// Default 1,000; at most MaxClaimLimit.
	Limit int
}

// PurgeResult counts what a retention pass deleted.
type PurgeResult struct {
	Items    int
	Barriers int
	// Lanes counts the lanes of flow keys deleted: idle longer than
	// OlderThan, with no item available or claimed and no limit of their
	// own. An enqueue of the key opens its lane again.
	Lanes int
}

// Purge deletes, in one bounded pass, completed, dead and cancelled items
// and fired barriers older than p.OlderThan, never what a barrier still
// needs: a fired barrier goes only once its join item has finished (the
// join reads the children's results through it), and a child of a barrier
// only once that barrier is gone, so the children of a barrier that has
// not fired, or whose join still runs, stay whatever their age. Nor does
// it delete what a run that has not finished can still revive or resume:
// every item and barrier of a halted or waiting run stays whatever its
// age, and so does a dead item of a running run (one that ReviveRunItem
// left dead) and a barrier of it whose join is dead; once the run is
// completed or cancelled, they go by the rules above, at the next pass
// for those that finished longer than OlderThan ago. Call it
// again while it deletes p.Limit of either (the worker's maintenance does):
// each pass is a few short transactions of at most Limit rows, so that it
// does not hold up claiming. Any number of processes may purge at once.
//
// The lanes of flow keys (SetLimit, ItemSpec.FlowKey) that have been
// idle longer than p.OlderThan go too, with no available or claimed item
// left and no limit of their own, so that keys that come and go do not
// leave a row each for ever; an enqueue of the key opens its lane again.
//
// An item's history (Store.Attempts), tags and metadata
// (Store.ItemMetadata) and progress (Store.Progress) are deleted with it,
// in its transaction (or its statement). Deleted items
// are gone: their idempotency keys may be enqueued again,
// Get returns ErrNotFound, and a completion retried after ErrCommitUnknown
// gets ErrClaimLost. Keep OlderThan well above the time an item's result
// is read and a dead item may be revived.
func (s *Store) Purge(ctx context.Context, p PurgeParams) (PurgeResult, error) {
	if p.OlderThan < s.MinLease() || p.OlderThan > MaxDelay {
		return PurgeResult{}, invalid("OlderThan", "%v is outside [%v, %v]", p.OlderThan, s.MinLease(), MaxDelay)
	}
	if p.Limit == 0 {
		p.Limit = 1000
	}
	if p.Limit < 1 || p.Limit > MaxClaimLimit {
		return PurgeResult{}, invalid("Limit", "%d is outside [1, %d]", p.Limit, MaxClaimLimit)
	}
	var r PurgeResult
	age := -micros(p.OlderThan)
	// Barriers first: their children become free to go in the same pass.
	n, err := s.purge(ctx, "{barriers}", purgeBarrierGone, age, p.Limit)
	r.Barriers = n
	if err != nil {
		return r, err
	}
	r.Items, err = s.purge(ctx, itemsTable, purgeItemGone, age, p.Limit)
	if err != nil {
		return r, err
	}
	r.Lanes, err = s.purge(ctx, "{lanes}", purgeLaneGone, age, p.Limit)
	if err != nil || r.Lanes >= p.Limit {
		return r, err
	}
	n, err = s.purge(ctx, "{lanes}", purgeLaneLeft, age, p.Limit-r.Lanes)
	r.Lanes += n
	return r, err
}

// itemsTable is the table of items, as purge is given it.
const itemsTable = "{items}"

// purge deletes up to limit rows of table meeting cond (which binds the
// age at each {now+?}): a read of their ids, then deletes in batches, each checking
// cond again, so that a row that changed since the read (an item revived)
// stays. The read is a plain one, outside any transaction: on a
// single-writer database it does not wait for, nor hold up, the writer.
// Where the dialect deletes a batch in one statement (dialect.Purger),
// items go that way instead (purgeItems).
func (s *Store) purge(ctx context.Context, table, cond string, age int64, limit int) (int, error) {
	if table == itemsTable && s.purger != nil {
		return s.purgeItems(ctx, age, limit)
	}
	if err := s.insideFence(ctx, "purge"); err != nil {
		return 0, err
	}
	read, order := cond, ""
	if table == itemsTable {
		read, order = purgeItemRead, purgeItemOrder
	}
	var ids []uuid.UUID
	err := s.read(ctx, "purge", func() error {
		ids = ids[:0]
		rows, err := s.db.QueryContext(ctx, s.sql(qPurgeSelect(s.d, table, read, order, limit)), ageArgs(read, age)...)
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
		return 0, err
	}
	deleted := 0
	for _, batch := range chunks(ids, s.purgeDeleteMax()) {
		ages := ageArgs(cond, age)
		args := append(ages, s.idArgs(batch)...)
		var n int64
		err := s.inTx(ctx, "purge", func(tx dialect.Tx) error {
			res, err := tx.ExecContext(ctx, s.sql(s.qPurgeDelete(table, cond, len(batch))), args...)
			if err != nil {
				return err
			}
			if n, err = res.RowsAffected(); err != nil || n == 0 || table != itemsTable {
				return err
			}
			// An item's history, tags, metadata and progress go with it,
			// in its transaction.
			if _, err = tx.ExecContext(ctx, s.sql(s.qAttemptsOrphaned(len(batch))), args[len(ages):]...); err != nil {
				return err
			}
			if _, err = tx.ExecContext(ctx, s.sql(s.qMetaOrphaned(len(batch))), args[len(ages):]...); err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, s.sql(s.qProgressOrphaned(len(batch))), args[len(ages):]...)
			return err
		})
		if err != nil {
			return deleted, err
		}
		deleted += int(n)
		if err := fault.Hit(ctx, fault.RetainBetweenBatches); err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}

// ageArgs binds age at each {now+?} of cond.
func ageArgs(cond string, age int64) []any {
	out := make([]any, strings.Count(cond, "{now+?}"))
	for i := range out {
		out[i] = age
	}
	return out
}

// purgeItems deletes up to limit old finished items with their history,
// a batch of at most purgeDeleteMax in each of the dialect's single
// statements, outside any transaction (each is atomic, and one that runs
// again after an unknown outcome deletes only what is left), until a
// batch comes back short.
func (s *Store) purgeItems(ctx context.Context, age int64, limit int) (int, error) {
	if err := s.insideFence(ctx, "purge"); err != nil {
		return 0, err
	}
	deleted := 0
	for deleted < limit {
		want := min(limit-deleted, s.purgeDeleteMax())
		q, args := s.qPurgeItems(want, age)
		var n int
		err := s.retry(ctx, "purge", func() error { return s.db.QueryRowContext(ctx, q, args...).Scan(&n) })
		if err != nil {
			return deleted, err
		}
		deleted += n
		if n < want {
			break
		}
		if err := fault.Hit(ctx, fault.RetainBetweenBatches); err != nil {
			return deleted, err
		}
	}
	return deleted, nil
}
