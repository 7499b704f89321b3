package core

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
)

// lockedRow is an item's row as a claim's holder reads it, locked.
type lockedRow struct {
	state State
	token uuid.NullUUID
	h     held
	// inTime is false once a claim with a deadline (Claim.Within) is past
	// it on the database clock; always true for one without.
	inTime bool
}

// heldBy reports whether the row is still c's claim.
func (r lockedRow) heldBy(c Claim) bool {
	return r.state == StateClaimed && r.token.Valid && r.token.UUID == c.Token
}

// lockRow locks and reads c's item row. A claim with a deadline is read
// with its deadline check in the same statement, so that the database
// clock decides it while the row is locked: no write under the claim can
// slip in between the check and the transaction's own writes.
func (s *Store) lockRow(ctx context.Context, tx dialect.Querier, c Claim) (lockedRow, error) {
	var (
		r       = lockedRow{inTime: true}
		state   string
		barrier uuid.NullUUID
		key     sql.NullString
		err     error
	)
	if c.Within > 0 {
		var in int
		err = tx.QueryRowContext(ctx, s.sql(qClaimLockWithin),
			-micros(c.Within), s.d.UUID(c.ID)).Scan(&state, &r.token, &r.h.attempt, &r.h.maxAttempts, &barrier, &r.h.queue, &key, &in)
		r.inTime = in == 1
	} else {
		err = tx.QueryRowContext(ctx, s.sql(qClaimLock),
			s.d.UUID(c.ID)).Scan(&state, &r.token, &r.h.attempt, &r.h.maxAttempts, &barrier, &r.h.queue, &key)
	}
	r.state, r.h.barrier, r.h.flowKey = State(state), barrier.UUID, key.String
	return r, err
}

// pastDeadline is the error of a write under c after its deadline.
func pastDeadline(c Claim) error {
	return fmt.Errorf("plenum: %s: more than %v after its claim: %w", c.ID, c.Within, ErrPastDeadline)
}

// refuseLate returns ErrPastDeadline, in the caller's transaction, when
// one of cs carries a deadline it is past while it still holds its item,
// for the calls that fence many claims in one statement (CompleteMany,
// ExtendMany) and leave lost claims to it. It locks only the rows of the
// claims with a deadline, in id order (the order every batch locks items
// in), and costs nothing for claims without one.
func (s *Store) refuseLate(ctx context.Context, tx dialect.Querier, cs []Claim) error {
	var timed []Claim
	for _, c := range cs {
		if c.Within > 0 {
			timed = append(timed, c)
		}
	}
	slices.SortFunc(timed, func(a, b Claim) int { return bytes.Compare(a.ID[:], b.ID[:]) })
	for _, c := range timed {
		r, err := s.lockRow(ctx, tx, c)
		if sqlkit.IsNoRows(err) {
			continue
		}
		if err != nil {
			return err
		}
		if r.heldBy(c) && !r.inTime {
			return pastDeadline(c)
		}
	}
	return nil
}

// timedClaims returns the claims of cs that carry a deadline, nil (and no
// allocation, on the completer's path) when none does.
func timedClaims(cs []Completion) []Claim {
	var out []Claim
	for _, c := range cs {
		if c.Claim.Within > 0 {
			out = append(out, c.Claim)
		}
	}
	return out
}
