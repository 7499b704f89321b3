package core

import (
	"bytes"
	"context"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
)

// ReapParams tune a reaper pass.
type ReapParams struct {
	// StaleAfter is how long an owner may go without a heartbeat before it
	// is presumed dead. Default 30 s; at least 2 × Store.MinLease. Keep it well
	// above the heartbeat interval plus the longest fence (on SQLite a long
	// fence holds the only writer and delays every heartbeat).
	StaleAfter time.Duration
	// MaxCrashes dead-letters an item whose owners died this many times
	// while holding it: a poison item that keeps killing its worker.
	// Default 3.
	MaxCrashes int
	// Limit bounds the claims released per pass. Default 1,000.
	Limit int
}

// ReapResult counts what a reaper pass did.
type ReapResult struct {
	// OwnersRemoved counts owners whose heartbeat went stale.
	OwnersRemoved int
	// Crashed counts claims released because their owner is gone.
	Crashed int
	// TimedOut counts claims released because their lease expired while
	// their owner was alive.
	TimedOut int
	// DeadLettered counts items that became dead in this pass (too many
	// crashes, or a timeout on the last attempt).
	DeadLettered int
}

// Reap removes owners whose heartbeat is stale, releases the claims of
// owners that are gone (counting a crash, not an attempt, and dead-lettering
// an item after MaxCrashes) and the claims whose lease expired (a timeout:
// the attempt counts, and the item waits out the store's backoff as after
// Fail). Any number of reapers may run at once: every release
// is a compare-and-set on the id, token and state it read, so each claim is
// released, and each crash counted, once.
func (s *Store) Reap(ctx context.Context, p ReapParams) (ReapResult, error) {
	if p.StaleAfter == 0 {
		p.StaleAfter = 30 * time.Second
	}
	if min := 2 * s.MinLease(); p.StaleAfter < min || p.StaleAfter > MaxLease {
		return ReapResult{}, invalid("StaleAfter", "%v is outside [%v, %v]", p.StaleAfter, min, MaxLease)
	}
	if p.MaxCrashes == 0 {
		p.MaxCrashes = DefaultMaxCrashes
	}
	if p.MaxCrashes < 1 {
		return ReapResult{}, invalid("MaxCrashes", "%d is below 1", p.MaxCrashes)
	}
	if p.Limit == 0 {
		p.Limit = 1000
	}
	if p.Limit < 1 || p.Limit > MaxClaimLimit {
		return ReapResult{}, invalid("Limit", "%d is outside [1, %d]", p.Limit, MaxClaimLimit)
	}
	var r ReapResult
	err := s.inTx(ctx, "reap", func(tx dialect.Tx) error {
		r = ReapResult{}
		res, err := tx.ExecContext(ctx, s.sql("DELETE FROM {processes} WHERE last_heartbeat_at < {now+}"), -micros(p.StaleAfter))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		r.OwnersRemoved = int(n)

		var arrivals []arrival
		orphans, err := s.reapable(ctx, tx, "NOT EXISTS (SELECT 1 FROM {processes} p WHERE p.id = {items}.claimed_by)", p.Limit)
		if err != nil {
			return err
		}
		for _, o := range orphans {
			dead := o.crashes+1 >= p.MaxCrashes
			set := "state = 'available', available_at = {now}, lease_expires_at = NULL, attempt = attempt - 1, crash_count = crash_count + 1, last_error = ?"
			if dead {
				set = "state = 'dead', finished_at = {now}, lease_expires_at = NULL, crash_count = crash_count + 1, last_error = ?"
			}
			changed, err := s.cas(ctx, tx, o, set, "owner died while holding the claim")
			if err != nil {
				return err
			}
			if !changed {
				continue
			}
			r.Crashed++
			if dead {
				r.DeadLettered++
				arrivals = append(arrivals, arrival{barrier: o.barrier, failed: 1})
			}
		}

		// Only claims of live owners time out: an orphan left over by this
		// pass's limit is a crash, for the next pass to count as one.
		expired, err := s.reapable(ctx, tx, "lease_expires_at < {now} AND EXISTS (SELECT 1 FROM {processes} p WHERE p.id = {items}.claimed_by)", p.Limit)
		if err != nil {
			return err
		}
		for _, o := range expired {
			// A timeout is a failed attempt: it retries after the same
			// backoff as Fail, so that a handler slower than its lease is not
			// hammered.
			dead := o.attempt >= o.maxAttempts
			var changed bool
			if dead {
				changed, err = s.cas(ctx, tx, o, "state = 'dead', finished_at = {now}, lease_expires_at = NULL, last_error = ?", "lease expired")
			} else {
				changed, err = s.cas(ctx, tx, o, "state = 'available', available_at = {now+}, lease_expires_at = NULL, last_error = ?",
					micros(s.opts.Backoff(o.attempt)), "lease expired")
			}
			if err != nil {
				return err
			}
			if !changed {
				continue
			}
			r.TimedOut++
			if dead {
				r.DeadLettered++
				arrivals = append(arrivals, arrival{barrier: o.barrier, failed: 1})
			}
		}
		return s.settle(ctx, tx, arrivals)
	})
	if err == nil && (r.OwnersRemoved+r.Crashed+r.TimedOut) > 0 {
		s.log.InfoContext(ctx, "plenum: reaped", "owners", r.OwnersRemoved, "crashed", r.Crashed, "timed_out", r.TimedOut, "dead", r.DeadLettered)
	}
	return r, err
}

type reapCandidate struct {
	id, token, barrier uuid.UUID
	crashes, attempt   int
	maxAttempts        int
}

// reapable lists claimed items meeting cond, in id order (the lock order).
func (s *Store) reapable(ctx context.Context, tx dialect.Querier, cond string, limit int) ([]reapCandidate, error) {
	rows, err := tx.QueryContext(ctx, s.sql("SELECT id, claim_token, barrier_id, crash_count, attempt, max_attempts FROM {items} WHERE state = 'claimed' AND "+cond+s.d.Limit(limit)))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []reapCandidate
	for rows.Next() {
		var c reapCandidate
		var token, barrier uuid.NullUUID
		if err := rows.Scan(&c.id, &token, &barrier, &c.crashes, &c.attempt, &c.maxAttempts); err != nil {
			return nil, err
		}
		c.token, c.barrier = token.UUID, barrier.UUID
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b reapCandidate) int { return bytes.Compare(a.id[:], b.id[:]) })
	return out, rows.Err()
}

// cas releases the claim c read, if the item still holds it: a
// compare-and-set on (id, token, state) that applies set, and reports
// whether it changed the row. It locks the row by its primary key first:
// an UPDATE that the database plans through a secondary index (MariaDB
// does for small tables) locks that index's entry before the row, and
// would deadlock with a fence that holds the row and is about to change
// the entry. Locked first, the release waits for the fence instead.
func (s *Store) cas(ctx context.Context, tx dialect.Querier, c reapCandidate, set string, setArgs ...any) (bool, error) {
	id, token := s.d.UUID(c.id), s.d.UUID(c.token)
	var one int
	err := tx.QueryRowContext(ctx, s.sql("SELECT 1 FROM {items} WHERE id = ? AND claim_token = ? AND state = 'claimed'{lock}"), id, token).Scan(&one)
	if dialect.IsNoRows(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	res, err := tx.ExecContext(ctx, s.sql("UPDATE {items} SET "+set+" WHERE id = ? AND claim_token = ? AND state = 'claimed'"), append(setArgs, id, token)...)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
