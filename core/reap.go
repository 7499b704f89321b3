package core

import (
	"bytes"
	"context"
	"database/sql"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/fault"
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

// Reap removes owners whose heartbeat is stale, releases every claim of an
// owner that is gone, whatever its lease (a crash: no attempt used, and the
// item dead-lettered after MaxCrashes), and the claims of live owners whose
// lease expired (a timeout: the attempt counts, and the item waits out the
// store's backoff as after Fail). Each release is recorded in the item's
// history (Store.Attempts), one insert per batch, in the batch's
// transaction. Any number of reapers may run at once: every release is a
// compare-and-set on the id, claim token and state the reaper read, made
// under the row's lock, so each claim is released, and each crash counted,
// once.
//
// A pass is several short transactions, not one: the owners, a read of
// what to release, then the releases in batches of reapBatch, each with
// its barrier arrivals. A reaper never holds a busy barrier's row for longer
// than one batch, and on a serializable database its read set stays small.
// On an error the result counts what the pass committed before it.
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
	if p.MaxCrashes < 1 || p.MaxCrashes > MaxAttemptsCeiling {
		return ReapResult{}, invalid("MaxCrashes", "%d is outside [1, %d]", p.MaxCrashes, MaxAttemptsCeiling)
	}
	if p.Limit == 0 {
		p.Limit = 1000
	}
	if p.Limit < 1 || p.Limit > MaxClaimLimit {
		return ReapResult{}, invalid("Limit", "%d is outside [1, %d]", p.Limit, MaxClaimLimit)
	}
	var r ReapResult
	err := s.reap(ctx, p, &r)
	if r.OwnersRemoved+r.Crashed+r.TimedOut > 0 {
		s.log.InfoContext(ctx, "plenum: reaped", "owners", r.OwnersRemoved, "crashed", r.Crashed, "timed_out", r.TimedOut, "dead", r.DeadLettered)
	}
	return r, err
}

// reapBatch bounds the claims one release transaction takes.
const reapBatch = 100

func (s *Store) reap(ctx context.Context, p ReapParams, r *ReapResult) error {
	err := s.inTx(ctx, "reap", func(tx dialect.Tx) error {
		res, err := tx.ExecContext(ctx, s.sql(qReapOwners), -micros(p.StaleAfter))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		r.OwnersRemoved = int(n)
		return err
	})
	if err != nil {
		return err
	}
	// An owner once removed never returns, so a claim read here as an
	// orphan stays one for as long as it keeps its token.
	orphans, err := s.reapable(ctx, reapOrphan, p.Limit)
	if err != nil {
		return err
	}
	if err := s.release(ctx, orphans, false, &r.Crashed, &r.DeadLettered, func(tx dialect.Tx, held []reapCandidate) ([]reapCandidate, error) {
		again, dead := split(held, func(o reapCandidate) bool { return o.crashes+1 >= p.MaxCrashes })
		const why = "owner died while holding the claim"
		if err := s.updateIDs(ctx, tx, reapCrashRetry, []any{why}, again); err != nil {
			return nil, err
		}
		// A crash's retry is claimable at once (retryIn 0).
		if err := s.handBack(ctx, tx, handedBack(again)); err != nil {
			return nil, err
		}
		if err := fault.Hit(ctx, fault.ReapBeforeCrashCount); err != nil {
			return nil, err
		}
		if err := s.recordAttempts(ctx, tx, OutcomeCrash, why, candidateIDs(held)); err != nil {
			return nil, err
		}
		if err := s.updateIDs(ctx, tx, reapCrashDead, []any{why}, dead); err != nil {
			return nil, err
		}
		_, err := s.haltRunsOf(ctx, tx, candidateIDs(dead), HaltCrashesExhausted, why)
		return dead, err
	}); err != nil {
		return err
	}

	// Only claims of live owners time out: an orphan left over by this
	// pass's limit is a crash, for the next pass to count as one.
	expired, err := s.reapable(ctx, reapExpired, p.Limit)
	if err != nil {
		return err
	}
	return s.release(ctx, expired, true, &r.TimedOut, &r.DeadLettered, func(tx dialect.Tx, held []reapCandidate) ([]reapCandidate, error) {
		again, dead := split(held, func(o reapCandidate) bool { return o.attempt >= o.maxAttempts })
		const why = "lease expired"
		if err := s.recordAttempts(ctx, tx, OutcomeTimeout, why, candidateIDs(held)); err != nil {
			return nil, err
		}
		// A timeout is a failed attempt: it retries after the same backoff
		// as Fail, so that a handler slower than its lease is not hammered.
		if len(again) > 0 {
			var args []any
			for i := range again {
				// Read once: the backoff may be jittered, and the lane's
				// turn must be the item's time.
				again[i].retryIn = s.opts.backoff(again[i].attempt)
				args = append(args, s.d.UUID(again[i].id), micros(again[i].retryIn))
			}
			if err := s.updateIDs(ctx, tx, reapTimeoutRetry(len(again)), append(args, why), again); err != nil {
				return nil, err
			}
			if err := s.handBack(ctx, tx, handedBack(again)); err != nil {
				return nil, err
			}
		}
		if err := s.updateIDs(ctx, tx, reapTimeoutDead, []any{why}, dead); err != nil {
			return nil, err
		}
		_, err := s.haltRunsOf(ctx, tx, candidateIDs(dead), HaltAttemptsExhausted, why)
		return dead, err
	})
}

type reapCandidate struct {
	id, token, barrier uuid.UUID
	crashes, attempt   int
	maxAttempts        int
	queue, flowKey     string // the item's lane, where it has a flow key
	// retryIn is when the release makes the item claimable again, from
	// now: its backoff, for a timeout's retry.
	retryIn time.Duration
}

// handedBack is the lanes of the items of cs, which a release hands
// back, each from its item's time, retryIn from now (handBack leaves out
// the items without a flow key; readyRefs moves a queue's lanes in one
// statement, to the earliest of them).
func handedBack(cs []reapCandidate) []laneRef {
	out := make([]laneRef, 0, len(cs))
	for _, c := range cs {
		out = append(out, laneRef{queue: c.queue, key: c.flowKey, delay: c.retryIn})
	}
	return out
}

// reapable lists up to limit claimed items meeting cond, in id order (the
// lock order).
func (s *Store) reapable(ctx context.Context, cond string, limit int) ([]reapCandidate, error) {
	var out []reapCandidate
	err := s.inTx(ctx, "reap", func(tx dialect.Tx) error {
		out = out[:0]
		rows, err := tx.QueryContext(ctx, s.sql(qReapable(s.d, cond, limit)))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			c, err := scanCandidate(rows)
			if err != nil {
				return err
			}
			out = append(out, c)
		}
		return rows.Err()
	})
	slices.SortFunc(out, func(a, b reapCandidate) int { return bytes.Compare(a.id[:], b.id[:]) })
	return out, err
}

func scanCandidate(rows *sql.Rows, extra ...any) (reapCandidate, error) {
	var c reapCandidate
	var token, barrier uuid.NullUUID
	var key sql.NullString
	if err := rows.Scan(append([]any{&c.id, &token, &barrier, &c.crashes, &c.attempt, &c.maxAttempts, &c.queue, &key}, extra...)...); err != nil {
		return c, err
	}
	c.token, c.barrier, c.flowKey = token.UUID, barrier.UUID, key.String
	return c, nil
}

// release takes back, in transactions of up to reapBatch claims, the
// candidates that still hold the claim the reaper read. Each transaction
// locks its candidates' rows, keeps those still held (with leased, only
// those whose lease is still expired: an Extend since the read saves a
// claim), lets apply change them, and counts the dead ones apply returns
// at their barriers. On commit it adds the claims taken back to released
// and the dead ones to dead.
func (s *Store) release(ctx context.Context, cands []reapCandidate, leased bool, released, dead *int, apply func(tx dialect.Tx, held []reapCandidate) (dead []reapCandidate, err error)) error {
	for _, batch := range chunks(cands, s.releaseMax()) {
		var held, gone []reapCandidate
		err := s.inTx(ctx, "reap", func(tx dialect.Tx) error {
			var err error
			held, gone = nil, nil
			if held, err = s.lockCandidates(ctx, tx, batch, leased); err != nil || len(held) == 0 {
				return err
			}
			if gone, err = apply(tx, held); err != nil {
				return err
			}
			return s.settle(ctx, tx, failedAt(gone))
		})
		if err != nil {
			return err
		}
		*released += len(held)
		*dead += len(gone)
	}
	return nil
}

// updateIDs applies assign, with its arguments, to the items of cs.
func (s *Store) updateIDs(ctx context.Context, tx dialect.Querier, assign string, args []any, cs []reapCandidate) error {
	if len(cs) == 0 {
		return nil
	}
	for _, c := range cs {
		args = append(args, s.d.UUID(c.id))
	}
	_, err := tx.ExecContext(ctx, s.sql(qUpdateIDs(assign, len(cs))), args...)
	return err
}

// split divides cs into those for which dead is false and those for which
// it is true.
func split(cs []reapCandidate, dead func(reapCandidate) bool) (live, gone []reapCandidate) {
	for _, c := range cs {
		if dead(c) {
			gone = append(gone, c)
		} else {
			live = append(live, c)
		}
	}
	return live, gone
}

// candidateIDs returns the ids of cs.
func candidateIDs(cs []reapCandidate) []uuid.UUID {
	out := make([]uuid.UUID, len(cs))
	for i, c := range cs {
		out[i] = c.id
	}
	return out
}

// failedAt is one failed arrival at its barrier for each of cs.
func failedAt(cs []reapCandidate) []arrival {
	out := make([]arrival, 0, len(cs))
	for _, c := range cs {
		out = append(out, arrival{barrier: c.barrier, failed: 1})
	}
	return out
}

// lockCandidates locks the rows of batch by primary key, in id order, and
// returns the candidates whose row is still claimed with the token read
// (and, with leased, still has an expired lease), as they are now.
func (s *Store) lockCandidates(ctx context.Context, tx dialect.Querier, batch []reapCandidate, leased bool) ([]reapCandidate, error) {
	read := make(map[uuid.UUID]uuid.UUID, len(batch))
	args := make([]any, 0, len(batch))
	for _, c := range batch {
		read[c.id] = c.token
		args = append(args, s.d.UUID(c.id))
	}
	rows, err := tx.QueryContext(ctx, s.sql(qReapLock(len(batch))), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var held []reapCandidate
	for rows.Next() {
		var state string
		var expired int
		c, err := scanCandidate(rows, &state, &expired)
		if err != nil {
			return nil, err
		}
		if state == string(StateClaimed) && c.token == read[c.id] && (!leased || expired == 1) {
			held = append(held, c)
		}
	}
	return held, rows.Err()
}
