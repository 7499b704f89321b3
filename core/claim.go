package core

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// ClaimParams say what to claim.
type ClaimParams struct {
	// Queue to claim from; required.
	Queue string
	// Owner is the registered owner (RegisterOwner) taking the claim. A
	// claim for an owner that was reaped fails with ErrOwnerLost.
	Owner uuid.UUID
	// Limit is the most items to take: 1 to MaxClaimLimit.
	Limit int
	// Lease is the claim's deadline, from now on the database clock:
	// MinLease to MaxLease. Only Extend and ExtendMany move it; the owner's
	// heartbeat does not. A reaper counts a lease that expires while its
	// owner is alive as a timeout (an attempt used), so make it the
	// handler's timeout, and keep it above the reaper's StaleAfter plus a
	// heartbeat interval: the claims of a dead owner are then found as
	// crashes before their leases run out.
	Lease time.Duration
	// MaxAttempts, when set, maps kinds to the most attempts their items
	// get: the claim lowers each claimed item of a listed kind whose
	// stored MaxAttempts is above its kind's limit to that limit, in the
	// claim statement itself, so that the returned claims, Get, inspect
	// and the dashboard show the limit that applies. Items of other kinds,
	// and those whose own limit is lower, keep theirs; nothing is ever
	// raised. At most MaxClaimKinds kinds, each a non-empty kind name, each
	// limit within [1, MaxAttemptsCeiling]. A runtime passes the limits of
	// its kinds (the worker's KindConfig.MaxAttempts). Default: none, and
	// the stored values stay the enqueue's.
	MaxAttempts map[string]int
	// Held, when set, is told of each flow key this claim left work of
	// because of the key's limits (Limit): at its concurrency limit, or
	// its rate spent (Until then). It is called before Claim returns,
	// whether or not the claim commits, and must not call the store.
	// Keys already held back when the claim begins (their lanes full,
	// or waiting for their rate) are not met, and not told of again.
	Held func(Held)
}

// Held is a flow key a claim left work of because of its limits.
type Held struct {
	// Queue and Key name the lane.
	Queue, Key string
	// Reason is HeldConcurrency, HeldPerProcess or HeldRate.
	Reason string
	// Until is, for HeldRate, when the key's rate allows its next claim,
	// on the database clock; zero otherwise.
	Until time.Time
}

// Reasons a key is held back (Held.Reason).
const (
	HeldConcurrency = "concurrency"
	HeldPerProcess  = "per-process"
	HeldRate        = "rate"
)

// Claim is one claimed item and the token that fences every change its
// holder makes. It is a value captured at claim time: fences compare the
// item's current token with this one, never with anything re-read.
type Claim struct {
	Item
	// Token identifies this claim. Items claimed together share it; the
	// pair (ID, Token) is unique.
	Token uuid.UUID
	// Owner is the owner that holds the claim.
	Owner uuid.UUID
	// Within, when positive, is the claim's deadline for its holder's
	// writes: how long after the claim was taken (claimed_at, on the
	// database clock) the holder may still change anything through it.
	// Past it, Fence, Expand, Complete, CompleteMany, Fail, Release,
	// Extend and ExtendMany refuse the claim with ErrPastDeadline and
	// change nothing, the check made in their own transaction, with the
	// item's row locked, against the database clock. Claim leaves it zero,
	// for no deadline: those calls then check the token alone. A runtime
	// sets it on the claims it hands to its handlers (the worker's
	// Job.Claim), so that a handler that overran its timeout cannot
	// complete or write late whatever context it passes; Extend moves the
	// lease, not this deadline.
	Within time.Duration
}

// Claim takes up to p.Limit available items of p.Queue, lowest priority
// number first, then earliest available, then lowest id, and returns them
// in that order. Concurrent claimers never get the same item; a claim locks
// only the rows it takes. It returns no items and no error when none are
// available, or when the queue is paused (PauseQueue). A claim whose
// commit outcome is unknown (the connection broke as it committed) is
// resolved before Claim returns: it reads the items again once the
// database answers and returns those the claim holds, or none; an error
// wrapping ErrCommitUnknown only if ctx ends or p.Lease passes first.
func (s *Store) Claim(ctx context.Context, p ClaimParams) ([]Claim, error) {
	if err := s.validateClaim(p); err != nil {
		return nil, err
	}
	var out []Claim
	err := s.inTx(ctx, "claim", func(tx dialect.Tx) error {
		var err error
		out, err = s.claim(ctx, tx, p)
		return err
	})
	if errors.Is(err, ErrCommitUnknown) && len(out) > 0 {
		return s.resolveClaim(ctx, out, p.Lease, err)
	}
	return out, err
}

// ClaimTx claims inside the caller's transaction, which must have been begun
// as the dialect requires (use Store.Begin). The claim holds only if that
// transaction commits. There is no retry.
func (s *Store) ClaimTx(ctx context.Context, tx dialect.Querier, p ClaimParams) ([]Claim, error) {
	if tx == nil {
		return nil, invalid("tx", "nil transaction")
	}
	if err := s.validateClaim(p); err != nil {
		return nil, err
	}
	out, err := s.claim(ctx, tx, p)
	return out, wrapDBError("claim", err)
}

// Begin starts a transaction the way the dialect's guarantees need
// (isolation level, SQLite's immediate mode), for ClaimTx and EnqueueTx.
func (s *Store) Begin(ctx context.Context) (dialect.Tx, error) {
	tx, err := s.d.Begin(ctx, s.db, dialect.TxOptions{})
	return tx, wrapDBError("begin", err)
}

func (s *Store) validateClaim(p ClaimParams) error {
	if err := lookupName("Queue", p.Queue, migrations.MaxQueueLen, true); err != nil {
		return err
	}
	if p.Owner == uuid.Nil {
		return invalid("Owner", "must be a registered owner (RegisterOwner)")
	}
	if p.Limit < 1 || p.Limit > MaxClaimLimit {
		return invalid("Limit", "%d is outside [1, %d]", p.Limit, MaxClaimLimit)
	}
	if err := validClaimLimits(p.MaxAttempts); err != nil {
		return err
	}
	return s.validLease("Lease", p.Lease)
}

func (s *Store) validLease(field string, d time.Duration) error {
	if min := s.MinLease(); d < min || d > MaxLease {
		return invalid(field, "%v is outside [%v, %v]", d, min, MaxLease)
	}
	return nil
}

// MinLease is the shortest lease this store accepts for a claim or an
// extension (a heartbeat moves no lease): the package's MinLease, or four
// times the dialect's MaxClockOffset where that is more, so that a lease
// always outlasts the disagreement between the clocks of the database's
// nodes.
// A reaper's StaleAfter must be at least twice it.
func (s *Store) MinLease() time.Duration {
	return max(MinLease, 4*s.caps.MaxClockOffset)
}

func (s *Store) claim(ctx context.Context, q dialect.Querier, p ClaimParams) ([]Claim, error) {
	token := uuid.Must(uuid.NewV7())
	n := min(p.Limit, s.claimMaxWith(len(p.MaxAttempts)))
	// Keyed items are claimed lane by lane (laneclaim.go), the others by
	// the queue's claim. Where this store has seen lanes in the queue
	// they go first, limited and shared as their limits say, and the
	// queue's claim fills what they leave; elsewhere the queue's claim
	// goes first and the lanes fill what it leaves, so that a queue
	// without keys pays for lanes only when it has fewer items than
	// asked for.
	var out []Claim
	take := func(more []Claim, err error) error {
		if out == nil {
			// The common case, one claim's rows: kept, not copied (a
			// claim of 100 is tens of kilobytes).
			out = more
			return err
		}
		out = append(out, more...)
		return err
	}
	lanesFirst, _ := s.lanesSeen.Load(p.Queue)
	if lanesFirst != nil {
		if err := take(s.claimLanes(ctx, q, p, token, n)); err != nil {
			return nil, err
		}
	}
	if len(out) < n {
		if err := take(s.claimPlain(ctx, q, p, token, n-len(out))); err != nil {
			return nil, err
		}
	}
	if lanesFirst == nil && len(out) < n {
		if err := take(s.claimLanes(ctx, q, p, token, n-len(out))); err != nil {
			return nil, err
		}
	}
	sortClaims(out)
	if len(out) == 0 {
		// Nothing claimed: tell a lost owner apart from an empty queue.
		var one int
		err := q.QueryRowContext(ctx, s.sql(qOwnerExists), s.d.UUID(p.Owner)).Scan(&one)
		if err != nil {
			return nil, err
		}
		if one == 0 {
			return nil, ErrOwnerLost
		}
	}
	return out, nil
}

// claimPlain claims up to n items of p.Queue without a flow key.
func (s *Store) claimPlain(ctx context.Context, q dialect.Querier, p ClaimParams, token uuid.UUID, n int) ([]Claim, error) {
	return s.claimWith(ctx, q, p, token, s.claimSpec(p, token, n), n)
}

// claimWith claims with the dialect's claim of spec, for p under token,
// and reads the claims it returns (at most n of them).
func (s *Store) claimWith(ctx context.Context, q dialect.Querier, p ClaimParams, token uuid.UUID, spec dialect.ClaimSpec, n int) ([]Claim, error) {
	if s.claimsLocked() {
		return s.claimLocked(ctx, q, p, token, spec, n)
	}
	rows, err := s.d.Claim(ctx, q, spec)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]Claim, 0, n)
	scan := newClaimScanner(s.d, p.Queue, p.Owner, token)
	for rows.Next() {
		c, err := scan.scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// claimSpec is what a claim of up to n items for p under token asks of
// the dialect.
func (s *Store) claimSpec(p ClaimParams, token uuid.UUID, n int) dialect.ClaimSpec {
	set, setArgs := s.claimSet, []any{s.d.UUID(token), s.d.UUID(p.Owner), micros(p.Lease)}
	if len(p.MaxAttempts) > 0 {
		set += claimLimitsSet(len(p.MaxAttempts))
		setArgs = append(setArgs, claimLimitsArgs(p.MaxAttempts)...)
	}
	return dialect.ClaimSpec{
		Table: s.names.Items,
		Key:   "id",
		// The owner must still be registered: a reaped owner that has not
		// noticed yet must not take new work it would hold as a ghost. A
		// paused queue gives nothing, read in the claim itself so that a
		// pause holds in every process from its commit on.
		Filter:     s.claimFilter,
		FilterArgs: []any{p.Queue, s.d.UUID(p.Owner), p.Queue, s.d.Bool(true)},
		OrderBy:    claimOrderBy,
		Limit:      n,
		Set:        set,
		SetArgs:    setArgs,
		Returning:  claimedColumns,
		Seek:       s.seek,
	}
}

// sortClaims puts claims in claim order (priority, then available_at,
// then id): an UPDATE returns rows in no promised order. A Claim is a few
// hundred bytes, so it sorts their positions and then moves each claim
// once, along the cycles of the permutation, rather than moving claims at
// every step of the sort (a claim of 1,000 spent 4% of a worker's CPU
// there).
func sortClaims(cs []Claim) {
	before := func(i, j int32) int {
		a, b := &cs[i], &cs[j]
		if c := cmp.Compare(a.Priority, b.Priority); c != 0 {
			return c
		}
		if c := a.AvailableAt.Compare(b.AvailableAt); c != 0 {
			return c
		}
		return bytes.Compare(a.ID[:], b.ID[:])
	}
	sorted := true
	for i := 1; i < len(cs) && sorted; i++ {
		sorted = before(int32(i-1), int32(i)) <= 0
	}
	if sorted {
		return
	}
	from := make([]int32, len(cs)) // from[k]: the claim that goes at k
	for i := range from {
		from[i] = int32(i)
	}
	slices.SortFunc(from, before)
	for start := range from {
		if from[start] < 0 || from[start] == int32(start) {
			continue
		}
		held := cs[start]
		k := start
		for int(from[k]) != start {
			next := int(from[k])
			cs[k] = cs[next]
			from[k] = -1
			k = next
		}
		cs[k] = held
		from[k] = -1
	}
}
