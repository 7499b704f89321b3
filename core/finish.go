package core

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
	"github.com/plenumdb/plenum/internal/fault"
)

// Completion is one item to complete, with its result.
type Completion struct {
	Claim  Claim
	Result json.RawMessage
}

// Complete marks the claimed item completed with result (a JSON document or
// nil). It changes the item only if c is still its claim; otherwise it
// returns ErrClaimLost and changes nothing. Completing again with the claim
// that already completed the item succeeds, so a retry after
// ErrCommitUnknown is safe. If the item belongs to a barrier, its arrival is
// counted in the same transaction and may fire the barrier.
func (s *Store) Complete(ctx context.Context, c Claim, result json.RawMessage) error {
	lost, err := s.CompleteMany(ctx, []Completion{{Claim: c, Result: result}})
	if err != nil {
		return err
	}
	if len(lost) > 0 {
		return fmt.Errorf("plenum: complete %s: %w", c.ID, ErrClaimLost)
	}
	return nil
}

// CompleteMany completes many claimed items in one transaction, each fenced
// on its own claim token, with one UPDATE per claim batch (completions
// sharing a token) and one counter update per barrier. It returns the ids
// whose claim was lost; those were not changed. Completions already done
// with the same claim count as done. A claim past its deadline
// (Claim.Within) while it still holds its item fails the whole call with
// ErrPastDeadline, and nothing is changed.
func (s *Store) CompleteMany(ctx context.Context, cs []Completion) (lost []uuid.UUID, err error) {
	if len(cs) == 0 {
		return nil, nil
	}
	seen := make(map[uuid.UUID]bool, len(cs))
	for i, c := range cs {
		// The field names are formatted only for an error: a batch's
		// checks are on every completion's path.
		if c.Claim.incomplete() || c.Claim.badWithin() {
			return nil, validClaim(fmt.Sprintf("completions[%d].Claim", i), c.Claim)
		}
		if seen[c.Claim.ID] {
			return nil, invalid(fmt.Sprintf("completions[%d].Claim", i), "item %s appears twice", c.Claim.ID)
		}
		seen[c.Claim.ID] = true
		if c.Result != nil {
			if err := s.validJSON(fmt.Sprintf("completions[%d].Result", i), c.Result); err != nil {
				return nil, err
			}
		}
	}
	timed := timedClaims(cs)
	err = s.inTx(ctx, "complete", func(tx dialect.Tx) error {
		if err := s.refuseLate(ctx, tx, timed); err != nil {
			return err
		}
		var err error
		lost, err = s.complete(ctx, tx, cs)
		return err
	})
	return lost, err
}

// complete runs inside a transaction; see CompleteMany.
func (s *Store) complete(ctx context.Context, tx dialect.Querier, cs []Completion) ([]uuid.UUID, error) {
	var lost []uuid.UUID
	var arrivals []arrival
	for _, same := range completionsByToken(cs) {
		// Two binds per item at most (CASE id WHEN ? THEN ?) plus the IN
		// list; results bounded by the statement size limit.
		token := same[0].Claim.Token
		for _, group := range s.completionBatches(same) {
			changed, counted, err := s.completeGroup(ctx, tx, token, group)
			if err != nil {
				return nil, err
			}
			arrivals = append(arrivals, counted...)
			if changed == nil {
				continue // every item changed, its arrival counted
			}
			var missed []uuid.UUID
			for _, c := range group {
				b, ok := changed[c.Claim.ID]
				if !ok {
					missed = append(missed, c.Claim.ID)
					continue
				}
				if b != uuid.Nil {
					arrivals = append(arrivals, arrival{barrier: b, arrived: 1})
				}
			}
			if len(missed) > 0 {
				again, err := s.alreadyCompleted(ctx, tx, token, missed)
				if err != nil {
					return nil, err
				}
				for _, id := range missed {
					if _, ok := again[id]; !ok {
						lost = append(lost, id)
					}
				}
			}
		}
	}
	if err := fault.Hit(ctx, fault.CompleteBeforeArrival); err != nil {
		return nil, err
	}
	if err := s.settle(ctx, tx, arrivals); err != nil {
		return nil, err
	}
	return lost, nil
}

// completionsByToken groups completions by claim token, in the order each token first
// appears. The usual batch, one claim's items, is returned as it is.
func completionsByToken(cs []Completion) [][]Completion {
	first := cs[0].Claim.Token
	one := true
	for _, c := range cs[1:] {
		if c.Claim.Token != first {
			one = false
			break
		}
	}
	if one {
		return [][]Completion{cs}
	}
	at := map[uuid.UUID]int{}
	var out [][]Completion
	for _, c := range cs {
		i, ok := at[c.Claim.Token]
		if !ok {
			i = len(out)
			at[c.Claim.Token] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], c)
	}
	return out
}

// completionBatches splits completions into statements: at most a third
// of the IN-list limit each (an item binds its id in the IN list and, with
// differing results, an id and a result in the CASE), and, where the
// database bounds a statement's size, at most that many bytes of results
// with a fixed overhead per item. A single completion over the limit still
// goes alone.
func (s *Store) completionBatches(cs []Completion) [][]Completion {
	maxN := s.completionMax()
	var out [][]Completion
	start, bytes := 0, 0
	for i, c := range cs {
		size := len(c.Result) + rowOverhead
		full := i-start >= maxN ||
			(s.caps.MaxStatementBytes > 0 && i > start && bytes+size > s.caps.MaxStatementBytes)
		if full {
			out = append(out, cs[start:i])
			start, bytes = i, 0
		}
		bytes += size
	}
	if start < len(cs) {
		out = append(out, cs[start:])
	}
	return out
}

// completeGroup completes the items of one claim token that still hold it,
// and returns those it changed by reading them, with their barrier ids,
// and the arrivals of those it changed without (completeAt), counted by
// number. These are missing from the map, where the caller finds them
// completed by this token; a nil map says that completeAt changed every
// item.
func (s *Store) completeGroup(ctx context.Context, tx dialect.Querier, token uuid.UUID, group []Completion) (map[uuid.UUID]uuid.UUID, []arrival, error) {
	ids := make([]uuid.UUID, len(group))
	for i, c := range group {
		ids[i] = c.Claim.ID
	}
	// Lock order is by id, everywhere.
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })

	// The claims say where the items count: at no barrier, or at one for
	// them all (the children of one fan-out). One update fenced on that
	// too completes them without reading them, or returning them.
	var counted []arrival
	barrier, one := oneBarrier(group)
	if one {
		n, err := s.completeAt(ctx, tx, token, group, ids, barrier)
		if err != nil {
			return nil, nil, err
		}
		if n > 0 && barrier != uuid.Nil {
			counted = append(counted, arrival{barrier: barrier, arrived: n})
		}
		if n == int64(len(ids)) {
			return nil, counted, nil
		}
		// Some were not changed: lost, completed before, or (the claims
		// given said otherwise, or a handover in the holder's fence moved
		// them) at another barrier. The path below tells them apart;
		// those just changed read as completed by this token, count as
		// done, and have arrived (counted).
	}
	changed := make(map[uuid.UUID]uuid.UUID, len(ids))
	held := ids
	if !s.caps.ReturningUpdate {
		var err error
		held, err = s.lockHeld(ctx, tx, token, ids, changed)
		if err != nil || len(held) == 0 {
			return changed, counted, err
		}
	}

	same := sameResult(group)
	args := s.completeArgs(group, held, token, same)
	if !s.caps.ReturningUpdate {
		_, err := tx.ExecContext(ctx, s.sql(s.qComplete(len(held), same, false)), args...)
		return changed, counted, err
	}
	rows, err := tx.QueryContext(ctx, s.sql(s.qComplete(len(held), same, true)), args...)
	if err != nil {
		return nil, nil, err
	}
	_, err = readBarriers(rows, changed)
	return changed, counted, err
}

// completeArgs are the arguments of qComplete (and of completeAt's)
// for the items of group that are in held (sorted ids): one result for
// all (same), or a CASE branch for each held item only, so that the
// statement's shape depends on one count, the catalog's size.
func (s *Store) completeArgs(group []Completion, held []uuid.UUID, token uuid.UUID, same bool) []any {
	var args []any
	if same {
		args = append(args, s.jsonArg(group[0].Result))
	} else {
		keep := make(map[uuid.UUID]bool, len(held))
		for _, id := range held {
			keep[id] = true
		}
		for _, c := range group {
			if keep[c.Claim.ID] {
				args = append(args, s.d.UUID(c.Claim.ID), s.jsonArg(c.Result))
			}
		}
	}
	return append(args, s.heldArgs(held, token)...)
}

// oneBarrier reports the barrier every claim of group says its item
// belongs to (uuid.Nil for none), if they all say the same. An item's
// barrier is set when it is inserted and changes only in its holder's
// own fence (a handover) or on revive, which takes an item that is not
// claimed; the completion does not rely on it, see completeAt.
func oneBarrier(group []Completion) (uuid.UUID, bool) {
	b := group[0].Claim.BarrierID
	for _, c := range group[1:] {
		if c.Claim.BarrierID != b {
			return uuid.Nil, false
		}
	}
	return b, true
}

// completeAt completes the items of group (ids, sorted) that token
// still holds and that belong to barrier (none, for uuid.Nil), in one
// statement: each of them counts at that barrier, so nothing needs
// reading first, or returning. Its update locks the rows in id order, as
// the locked path does. It returns how many it changed; where that is
// fewer than ids, the caller completes the rest by reading them.
func (s *Store) completeAt(ctx context.Context, tx dialect.Querier, token uuid.UUID, group []Completion, ids []uuid.UUID, barrier uuid.UUID) (int64, error) {
	same := sameResult(group)
	args := s.completeArgs(group, ids, token, same)
	stmt := s.qCompleteMemberless(len(ids), same)
	if barrier != uuid.Nil {
		stmt = s.qCompleteMembers(len(ids), same)
		args = append(args, s.d.UUID(barrier))
	}
	res, err := tx.ExecContext(ctx, s.sql(stmt), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// lockHeld locks, in id order, the items of ids that still hold token, for
// dialects without UPDATE ... RETURNING, and records their barriers.
func (s *Store) lockHeld(ctx context.Context, tx dialect.Querier, token uuid.UUID, ids []uuid.UUID, into map[uuid.UUID]uuid.UUID) ([]uuid.UUID, error) {
	rows, err := tx.QueryContext(ctx, s.sql(s.qHeldLock(len(ids))), s.heldArgs(ids, token)...)
	if err != nil {
		return nil, err
	}
	return readBarriers(rows, into)
}

// alreadyCompleted returns which of ids were completed by token before.
func (s *Store) alreadyCompleted(ctx context.Context, tx dialect.Querier, token uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]uuid.UUID, error) {
	rows, err := tx.QueryContext(ctx, s.sql(s.qHeldCompleted(len(ids))), s.heldArgs(ids, token)...)
	if err != nil {
		return nil, err
	}
	done := map[uuid.UUID]uuid.UUID{}
	_, err = readBarriers(rows, done)
	return done, err
}

// heldArgs are the arguments of heldBy for ids and token.
func (s *Store) heldArgs(ids []uuid.UUID, token uuid.UUID) []any {
	return append(s.idArgs(ids), s.d.UUID(token))
}

// idArgs are the arguments of idsIn (or columnIn) for ids: one list where
// the dialect binds lists, else one per id.
func (s *Store) idArgs(ids []uuid.UUID) []any {
	if s.lister != nil {
		return []any{s.lister.UUIDList(ids)}
	}
	args := make([]any, 0, len(ids)+1)
	for _, id := range ids {
		args = append(args, s.d.UUID(id))
	}
	return args
}

// readBarriers reads rows of (id, barrier_id) into into, closes rows, and
// returns the ids in the order read.
func readBarriers(rows *sql.Rows, into map[uuid.UUID]uuid.UUID) ([]uuid.UUID, error) {
	defer rows.Close()
	var ids []uuid.UUID
	// The scan's targets live outside the loop: one allocation each per
	// statement, not per row.
	var id uuid.UUID
	var b uuid.NullUUID
	for rows.Next() {
		b = uuid.NullUUID{}
		if err := rows.Scan(&id, &b); err != nil {
			return nil, err
		}
		into[id] = b.UUID
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

func sameResult(group []Completion) bool {
	for _, c := range group[1:] {
		if !bytes.Equal(c.Result, group[0].Result) || (c.Result == nil) != (group[0].Result == nil) {
			return false
		}
	}
	return true
}

// FailParams describe a failed attempt.
type FailParams struct {
	// Error is recorded as the item's last error and in its history
	// (Store.Attempts): invalid UTF-8 and NUL bytes become U+FFFD, and
	// text past MaxErrorBytes is cut.
	Error string
	// RetryIn, when positive, replaces the store's backoff for this retry.
	RetryIn time.Duration
	// Discard dead-letters the item now, whatever attempts are left.
	Discard bool
}

// Fail records a failed attempt, in the item's history (Store.Attempts)
// too, in the same transaction. The item becomes available again after a
// backoff counted on the database clock, or dead when its attempts are used
// up (or p.Discard is set); it reports whether the item is now dead. A dead
// item that belongs to a barrier counts as a failed arrival there, in the
// same transaction. A lost claim gives ErrClaimLost and changes nothing.
func (s *Store) Fail(ctx context.Context, c Claim, p FailParams) (dead bool, err error) {
	if err := validClaim("Claim", c); err != nil {
		return false, err
	}
	if p.RetryIn < 0 || p.RetryIn > MaxDelay {
		return false, invalid("RetryIn", "%v is outside [0, %v]", p.RetryIn, MaxDelay)
	}
	err = s.inTx(ctx, "fail", func(tx dialect.Tx) error {
		var err error
		dead, err = s.fail(ctx, tx, c, p)
		return err
	})
	return dead, err
}

// fail records a failed attempt; an item that dies halts its run with
// its last error as the halt's detail, as the reaper's halts have theirs.
func (s *Store) fail(ctx context.Context, tx dialect.Querier, c Claim, p FailParams) (bool, error) {
	dead, _, err := s.failHalting(ctx, tx, c, p, HaltAttemptsExhausted, cleanError(p.Error))
	return dead, err
}

// failHalting is fail; an item that dies halts its run with reason and
// detail, and the halt's id is returned (uuid.Nil for none).
func (s *Store) failHalting(ctx context.Context, tx dialect.Querier, c Claim, p FailParams, reason, detail string) (bool, uuid.UUID, error) {
	var haltID uuid.UUID
	dead, err := s.failOnce(ctx, tx, c, p, func() error {
		halts, err := s.haltRunsOf(ctx, tx, []uuid.UUID{c.ID}, reason, detail)
		for _, id := range halts {
			haltID = id
		}
		return err
	})
	return dead, haltID, err
}

// failOnce records the failed attempt; when the item dies, died runs
// before its barrier counts it, so that the item's own halt comes first
// and a death that makes the barrier fire halts the run in the item's
// name, not in its join's (as the reaper halts before it settles).
func (s *Store) failOnce(ctx context.Context, tx dialect.Querier, c Claim, p FailParams, died func() error) (bool, error) {
	h, err := s.lockClaim(ctx, tx, c)
	if err != nil {
		return false, err
	}
	text := cleanError(p.Error)
	if err := s.recordAttempts(ctx, tx, OutcomeFailed, text, []uuid.UUID{c.ID}); err != nil {
		return false, err
	}
	if p.Discard || h.attempt >= h.maxAttempts {
		_, err := tx.ExecContext(ctx, s.sql(qFailDead),
			text, s.d.UUID(c.ID))
		if err != nil {
			return false, err
		}
		if err := died(); err != nil {
			return false, err
		}
		if h.barrier != uuid.Nil {
			return true, s.settle(ctx, tx, []arrival{{barrier: h.barrier, failed: 1}})
		}
		return true, nil
	}
	delay := p.RetryIn
	if delay == 0 {
		delay = s.opts.backoff(h.attempt)
	}
	if _, err := tx.ExecContext(ctx, s.sql(qFailRetry),
		micros(delay), text, s.d.UUID(c.ID)); err != nil {
		return false, err
	}
	return false, s.handBack(ctx, tx, []laneRef{h.lane(delay)})
}

// Release gives the item back without using an attempt, available again
// after delay. A lost claim gives ErrClaimLost and changes nothing. With
// no delay, the queue's subscribers are woken once it commits (Subscribe).
func (s *Store) Release(ctx context.Context, c Claim, delay time.Duration) error {
	if err := validClaim("Claim", c); err != nil {
		return err
	}
	if delay < 0 || delay > MaxDelay {
		return invalid("delay", "%v is outside [0, %v]", delay, MaxDelay)
	}
	return s.inTx(ctx, "release", func(tx dialect.Tx) error {
		err := s.releaseClaim(ctx, tx, c, delay)
		if err == nil && delay == 0 {
			err = s.itemsReady(ctx, tx, c.Queue)
		}
		return err
	})
}

// releaseClaim gives c's item back, available after delay, inside a
// transaction: the fence, then the update. The caller wakes the queue.
func (s *Store) releaseClaim(ctx context.Context, tx dialect.Querier, c Claim, delay time.Duration) error {
	h, err := s.lockClaim(ctx, tx, c)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, s.sql(qRelease),
		micros(delay), s.d.UUID(c.ID)); err != nil {
		return err
	}
	return s.handBack(ctx, tx, []laneRef{h.lane(delay)})
}

// Extend moves the claim's lease to lease from now, on the database clock:
// ExtendMany for one claim. A lost claim gives ErrClaimLost and changes
// nothing.
func (s *Store) Extend(ctx context.Context, c Claim, lease time.Duration) error {
	if err := validClaim("Claim", c); err != nil {
		return err
	}
	lost, err := s.ExtendMany(ctx, []Claim{c}, lease)
	if err != nil {
		return err
	}
	if len(lost) > 0 {
		return fmt.Errorf("plenum: extend %s: %w", c.ID, ErrClaimLost)
	}
	return nil
}

// validClaim refuses a Claim that did not come from Claim, or whose
// deadline is out of range.
func validClaim(field string, c Claim) error {
	if c.incomplete() {
		return invalid(field, "has no id or token: pass the Claim that Claim returned")
	}
	if c.badWithin() {
		return invalid(field+".Within", "%v is outside [0, %v]", c.Within, MaxLease)
	}
	return nil
}

// badWithin reports whether c's deadline is out of range.
func (c Claim) badWithin() bool { return c.Within < 0 || c.Within > MaxLease }

// incomplete reports whether c lacks an id or a token.
func (c Claim) incomplete() bool { return c.ID == uuid.Nil || c.Token == uuid.Nil }

// held is what a locked claim's item looks like.
type held struct {
	attempt, maxAttempts int
	barrier              uuid.UUID
	queue, flowKey       string // the item's lane, where it has a flow key
}

// lane is h's item's lane, given work from delay on: for handBack, which
// passes over an item without a flow key.
func (h held) lane(delay time.Duration) laneRef {
	return laneRef{h.queue, h.flowKey, delay}
}

// lockClaim locks the item row and checks that c is still its claim, and
// within its deadline if it has one: the fence every single-item mutation
// goes through.
func (s *Store) lockClaim(ctx context.Context, tx dialect.Querier, c Claim) (held, error) {
	r, err := s.lockRow(ctx, tx, c)
	if sqlkit.IsNoRows(err) {
		return r.h, fmt.Errorf("plenum: %s: %w", c.ID, ErrClaimLost)
	}
	if err != nil {
		return r.h, err
	}
	if !r.heldBy(c) {
		return r.h, fmt.Errorf("plenum: %s: %w", c.ID, ErrClaimLost)
	}
	if !r.inTime {
		return r.h, pastDeadline(c)
	}
	return r.h, nil
}

// MaxErrorBytes bounds the error text Fail records; longer text is cut at
// a character boundary.
const MaxErrorBytes = 16 << 10

// cleanError makes a handler's error text storable on every database:
// valid UTF-8 without NUL bytes (PostgreSQL's text refuses them), at most
// MaxErrorBytes. A failure report must not fail because of its message.
func cleanError(msg string) string {
	msg = strings.ToValidUTF8(msg, "\uFFFD")
	msg = strings.ReplaceAll(msg, "\x00", "\uFFFD")
	if len(msg) <= MaxErrorBytes {
		return msg
	}
	cut := MaxErrorBytes
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut]
}
