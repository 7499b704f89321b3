package core

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
)

// ExtendMany moves the leases of many claims to lease from now, on the
// database clock, in one transaction: one UPDATE per batch of claims that
// share a token (on databases without UPDATE ... RETURNING, a locking read
// of the held rows before it). Each claim is fenced on its own token; the
// ids whose claim was lost are returned, and those were not changed. A
// claim past its deadline (Claim.Within) fails the whole call with
// ErrPastDeadline: a lease moves only while its holder may still write.
//
// A claim's lease is its handler's deadline: nothing but Extend and
// ExtendMany moves it (not the owner's heartbeat), so a handler that needs
// longer must ask for it while its claim is still held.
func (s *Store) ExtendMany(ctx context.Context, cs []Claim, lease time.Duration) (lost []uuid.UUID, err error) {
	if len(cs) == 0 {
		return nil, nil
	}
	if err := s.validLease("lease", lease); err != nil {
		return nil, err
	}
	seen := make(map[uuid.UUID]bool, len(cs))
	for i, c := range cs {
		if c.incomplete() || c.badWithin() {
			return nil, validClaim(fmt.Sprintf("claims[%d]", i), c)
		}
		if seen[c.ID] {
			return nil, invalid(fmt.Sprintf("claims[%d]", i), "item %s appears twice", c.ID)
		}
		seen[c.ID] = true
	}
	err = s.inTx(ctx, "extend", func(tx dialect.Tx) error {
		if err := s.refuseLate(ctx, tx, cs); err != nil {
			return err
		}
		lost = lost[:0]
		groups := byToken(cs)
		for _, token := range sortedKeys(groups) {
			for _, batch := range chunks(groups[token], s.extendMax()) {
				got, err := s.extendGroup(ctx, tx, token, batch, lease)
				if err != nil {
					return err
				}
				for _, id := range batch {
					if !got[id] {
						lost = append(lost, id)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(lost, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	return lost, nil
}

// extendGroup extends the items of ids (sorted, sharing token) that still
// hold token, and returns those it extended.
func (s *Store) extendGroup(ctx context.Context, tx dialect.Querier, token uuid.UUID, ids []uuid.UUID, lease time.Duration) (map[uuid.UUID]bool, error) {
	changed := map[uuid.UUID]uuid.UUID{}
	held := ids
	if !s.caps.ReturningUpdate {
		// Through the row lock, not the UPDATE's row count: an extension
		// that lands on the same clock tick changes no value, and some
		// databases (MySQL) count only changed rows.
		var err error
		if held, err = s.lockHeld(ctx, tx, token, ids, changed); err != nil || len(held) == 0 {
			return nil, err
		}
	}
	args := append([]any{micros(lease)}, s.heldArgs(held, token)...)
	got := make(map[uuid.UUID]bool, len(held))
	if !s.caps.ReturningUpdate {
		if _, err := tx.ExecContext(ctx, s.sql(s.qExtend(len(held), false)), args...); err != nil {
			return nil, err
		}
		for _, id := range held {
			got[id] = true
		}
		return got, nil
	}
	rows, err := tx.QueryContext(ctx, s.sql(s.qExtend(len(held), true)), args...)
	if err != nil {
		return nil, err
	}
	ret, err := readBarriers(rows, changed)
	for _, id := range ret {
		got[id] = true
	}
	return got, err
}

// Lost returns the ids of cs whose claim was taken away: the item was
// cancelled, released (by a reaper, or given back) or claimed again, or
// is gone. An item finished under the claim itself (completed, or dead
// after Fail, with the claim's token) is not lost. It only reads (one
// query per batch of claims sharing a token, taking no lock), so a
// runtime can poll it for the claims its handlers run on, to cancel a
// handler whose item was cancelled.
func (s *Store) Lost(ctx context.Context, cs []Claim) ([]uuid.UUID, error) {
	for i, c := range cs {
		if c.incomplete() || c.badWithin() {
			return nil, validClaim(fmt.Sprintf("claims[%d]", i), c)
		}
	}
	var lost []uuid.UUID
	groups := byToken(cs)
	for _, token := range sortedKeys(groups) {
		for _, batch := range chunks(groups[token], s.lostMax()) {
			args := make([]any, 0, len(batch)+1)
			for _, id := range batch {
				args = append(args, s.d.UUID(id))
			}
			args = append(args, s.d.UUID(token))
			var held map[uuid.UUID]uuid.UUID
			err := s.read(ctx, "lost", func() error {
				rows, err := s.db.QueryContext(ctx, s.sql(qLost(len(batch))), args...)
				if err != nil {
					return err
				}
				held = map[uuid.UUID]uuid.UUID{}
				_, err = readBarriers(rows, held)
				return err
			})
			if err != nil {
				return nil, err
			}
			for _, id := range batch {
				if _, ok := held[id]; !ok {
					lost = append(lost, id)
				}
			}
		}
	}
	slices.SortFunc(lost, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	return lost, nil
}

// byToken groups the ids of cs by claim token, each group sorted by id
// (the lock order).
func byToken(cs []Claim) map[uuid.UUID][]uuid.UUID {
	out := map[uuid.UUID][]uuid.UUID{}
	for _, c := range cs {
		out[c.Token] = append(out[c.Token], c.ID)
	}
	for _, ids := range out {
		slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	}
	return out
}

// sortedKeys returns the tokens of groups in a fixed order, so that
// transactions over several tokens lock in the same order every time.
func sortedKeys(groups map[uuid.UUID][]uuid.UUID) []uuid.UUID {
	keys := make([]uuid.UUID, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	return keys
}
