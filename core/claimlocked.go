package core

import (
	"context"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
)

// Where the database has no UPDATE ... RETURNING (MySQL, MariaDB), the
// dialect's Claim is three statements: a locking read of the rows'
// keys, the update, and a read of the rows as updated. Where the dialect
// can also lock rows without writing them (dialect.RowLocker), the core
// claims in two: it locks the rows and reads them as they are, with the
// database clock, then updates them, binding that clock's reading as
// the claim's time, and works out the rows as updated itself, since it
// wrote every change the update makes (claimedRow). The rows stay locked
// from the read to the commit, so nothing else changes them in between.

// claimsLocked reports whether s claims with claimLocked.
func (s *Store) claimsLocked() bool {
	return s.locker != nil && !s.caps.ReturningUpdate
}

// claimLocked claims the rows of spec for p under token, as the
// dialect's claim of spec would, in two statements (see above).
func (s *Store) claimLocked(ctx context.Context, q dialect.Querier, p ClaimParams, token uuid.UUID, spec dialect.ClaimSpec, n int) ([]Claim, error) {
	stmt, args, err := s.locker.LockRows(s.claimLockSpec(spec))
	if err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	out := make([]Claim, 0, n)
	scan := newClaimScanner(s.d, p.Queue, p.Owner, token)
	now := timeValue{d: s.d}
	scan.dest = append(scan.dest, &now)
	var at time.Time
	for rows.Next() {
		c, err := scan.scan(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		if at.IsZero() {
			// One time for the claim, bound below: the database's
			// clock may move between the rows of one read.
			at = now.t
		}
		out = append(out, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(out) == 0 {
		return out, err
	}
	lease := at.Add(p.Lease.Truncate(time.Microsecond))
	ids := make([]uuid.UUID, len(out))
	for i := range out {
		claimedRow(&out[i].Item, at, lease, p.MaxAttempts)
		ids[i] = out[i].ID
	}
	upd := make([]any, 0, 4+3*len(p.MaxAttempts)+len(ids))
	upd = append(upd, s.d.UUID(token), s.d.UUID(p.Owner), at, lease)
	if len(p.MaxAttempts) > 0 {
		upd = append(upd, claimLimitsArgs(p.MaxAttempts)...)
	}
	upd = append(upd, s.idArgs(ids)...)
	if _, err := q.ExecContext(ctx, s.sql(s.qClaimLocked(len(ids), len(p.MaxAttempts))), upd...); err != nil {
		return nil, err
	}
	return out, nil
}

// claimLockSpec is spec as LockRows takes it: the claim's rows as they
// are, and the database clock.
func (s *Store) claimLockSpec(spec dialect.ClaimSpec) dialect.ClaimSpec {
	spec.Returning = append(claimedColumns[:len(claimedColumns):len(claimedColumns)], s.expand.Replace("{now}"))
	return spec
}

// claimedRow makes it, read before the claim's update, what the update
// makes of it (claimSet, and claimLimitsSet for limits): claimed at at,
// its lease to lease, one attempt more, and its attempts no more than
// its kind's limit.
func claimedRow(it *Item, at, lease time.Time, limits map[string]int) {
	it.ClaimedAt, it.LeaseExpiresAt = at, lease
	it.Attempt++
	if n, ok := limits[it.Kind]; ok && it.MaxAttempts > n {
		it.MaxAttempts = n
	}
}

// qClaimLocked is claimLocked's update of n items, with the attempt
// limits of kinds kinds: claimSet with the claim's time and lease bound.
func (s *Store) qClaimLocked(n, kinds int) string {
	var b strings.Builder
	b.WriteString("UPDATE {items} SET state = 'claimed', claim_token = ?, claimed_by = ?, claimed_at = ?, lease_expires_at = ?, attempt = attempt + 1")
	if kinds > 0 {
		b.WriteString(claimLimitsSet(kinds))
	}
	b.WriteString(" WHERE ")
	b.WriteString(s.idsIn(n))
	return b.String()
}

// claimLockedStatements are what claimLocked sends for spec, a claim of n
// items with the attempt limits of kinds kinds: the locking read, and the
// update.
func (s *Store) claimLockedStatements(spec dialect.ClaimSpec, n, kinds int) []string {
	stmt, _, err := s.locker.LockRows(s.claimLockSpec(spec))
	if err != nil {
		return nil
	}
	return []string{stmt, s.sql(s.qClaimLocked(n, kinds))}
}
