package core

import (
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
)

// flowTemplates are the templates of flow control (flowstatements.go);
// see templates.go.
var flowTemplates = []entry{
	fixed("limit.queue-set", qQueueSetLimit),
	fixed("limit.queue-clear", qQueueClearLimit),
	fixed("limit.queue-read", qQueueLimit),
	fixed("limit.lane-set", qLaneSetLimit),
	fixed("limit.lane-clear", qLaneClearLimit),
	fixed("limit.lanes-read", qLaneLimits),
	fixed("lanes.queue-flow", qQueueFlow),
	fixed("lanes.wake-item", qLaneWakeItem),
	fixed("lanes.item", qItemLane),
	fixed("lanes.barrier", qBarrierLanes),
	fixed("lanes.next", qLanesNext),
	{name: "enqueue.now-keyed", max: (*Store).keyedInsertRowsMax, render: func(s *Store, n int) []string { return []string{s.insertSQL(insertRowNowKeyed, n)} }},
	{name: "enqueue.later-keyed", max: (*Store).keyedInsertRowsMax, render: func(s *Store, n int) []string { return []string{s.insertSQL(insertRowLaterKeyed, n)} }},
	{name: "lanes.open", max: (*Store).laneOpenMax, render: func(s *Store, n int) []string { return []string{s.laneOpenSQL(n)} }},
	sized("lanes.ready", func(s *Store) int { return s.inListMax(3) }, func(_ *Store, n int) string { return qLanesReady(n) }),
	sized("lanes.counts", func(s *Store) int { return s.inListMax(2) }, func(_ *Store, n int) string { return qLaneCounts(n) }),
	sized("lanes.first", func(s *Store) int { return s.inListMax(1) }, func(_ *Store, n int) string { return qLaneFirst(n) }),
	entry{name: "lanes.keys", render: func(s *Store, _ int) []string { return []string{s.sql(s.nextKeysSQL)} }}.on(scansKeys),
	entry{name: "claim.keys", render: func(s *Store, _ int) []string { return s.keyClaimStatements() }}.on(func(c dialect.Capabilities) bool { return c.RecursiveScan && c.ReturningUpdate }).onStore(locksKeys),
	withLocker(false, sized("lanes.served", func(*Store) int { return maxClaimLanes }, func(_ *Store, n int) string { return qLanesServed(n) })),
	withLocker(false, entry{name: "lanes.claim", max: func(*Store) int { return maxClaimLanes }, render: (*Store).laneClaimStatements}),
	withLocker(true, sized("lanes.taken", func(*Store) int { return maxClaimLanes }, func(_ *Store, n int) string { return qLanesTaken(n) })),
	withLocker(true, entry{name: "lanes.lock", max: func(*Store) int { return maxClaimLanes }, render: (*Store).laneLockStatements}),
	withLocker(false, entry{name: "lanes.claim-keys", max: func(*Store) int { return maxClaimLanes }, render: (*Store).laneKeysClaimStatements}),
	withLocker(true, entry{name: "lanes.lock-keys", max: func(*Store) int { return maxClaimLanes }, render: (*Store).laneKeysLockStatements}),
	{name: "claim.chosen", max: (*Store).claimMax, render: func(s *Store, n int) []string { return s.chosenStatementsWith(n, 0) }},
}

// laneCandidateTemplates are the reads of the lanes' candidates: one for
// any lanes where the dialect binds them as lists (dialect.KeyLister),
// else one entry for each count of lanes (its kinds, the template's
// second count), each sized by the items read of each.
func laneCandidateTemplates() []entry {
	out := make([]entry, 0, maxClaimLanes+1)
	out = append(out, entry{
		name:   "lanes.candidates",
		render: func(s *Store, _ int) []string { return []string{s.sql(qLaneCandidatesListed(s.keys))} },
	}.onStore(listsKeys))
	for m := 1; m <= maxClaimLanes; m++ {
		out = append(out, entry{
			name:   "lanes.candidates",
			kinds:  m,
			max:    limitMax,
			render: func(s *Store, f int) []string { return []string{s.sql(qLaneCandidates(s.d, m, f))} },
		}.onStore(notListsKeys))
	}
	return out
}

// laneFuseTemplates are the claims of lanes' items in one statement
// (claim.lanes: lanefuse.go): one for any count of lanes where the
// dialect binds them as lists (dialect.KeyLister), else one entry for
// each count (the template's second count); the items taken of each lane
// are bound.
func laneFuseTemplates() []entry {
	out := make([]entry, 0, maxClaimLanes+1)
	out = append(out, entry{
		name:   "claim.lanes",
		render: func(s *Store, _ int) []string { return s.fusedStatements(1) },
	}.on(returning).onStore(listsKeys))
	for m := 1; m <= maxClaimLanes; m++ {
		out = append(out, entry{
			name:   "claim.lanes",
			kinds:  m,
			render: func(s *Store, _ int) []string { return s.fusedStatements(m) },
		}.on(returning).onStore(notListsKeys))
	}
	return out
}

func scansKeys(c dialect.Capabilities) bool { return c.RecursiveScan }

// keyClaimStatements are the statements the dialect's Claim sends for a
// claim of the items of keys without limits, each key's read locking its
// rows (dialect.KeyLockLister).
func (s *Store) keyClaimStatements() []string {
	p := ClaimParams{Queue: "q", Owner: uuid.Nil, Limit: MaxClaimLimit, Lease: time.Minute}
	return s.claims(s.d, s.fusedSpec(p, uuid.Nil, 1, s.lanePartArgs("q", []string{""}, []int{1}), true))
}

func locksKeys(s *Store) bool { return s.keyLocks != nil && s.keys != nil }

func listsKeys(s *Store) bool    { return s.keys != nil }
func notListsKeys(s *Store) bool { return s.keys == nil }

// fusedStatements are the statements the dialect's Claim sends for a
// claim of the items of m lanes.
func (s *Store) fusedStatements(m int) []string {
	p := ClaimParams{Queue: "q", Owner: uuid.Nil, Limit: MaxClaimLimit, Lease: time.Minute}
	keys, counts := make([]string, m), make([]int, m)
	for i := range counts {
		counts[i] = 1
	}
	return s.claims(s.d, s.fusedSpec(p, uuid.Nil, m, s.lanePartArgs("q", keys, counts), false))
}

// chosenLimitTemplates are claim.chosen with attempt limits, as
// claimLimitTemplates are the claim's.
func chosenLimitTemplates() []entry {
	out := make([]entry, 0, MaxClaimKinds)
	for k := 1; k <= MaxClaimKinds; k++ {
		out = append(out, entry{
			name:   "claim.chosen.max-attempts",
			kinds:  k,
			max:    func(s *Store) int { return s.claimMaxWith(k) },
			render: func(s *Store, n int) []string { return s.chosenStatementsWith(n, k) },
		})
	}
	return out
}

// withLocker is e, sent only by a store whose dialect has (locks) or
// lacks a dialect.RowLocker: lanes are claimed and served, or locked and
// taken (queryLanes).
func withLocker(locks bool, e entry) entry {
	e.when = func(s *Store) bool { return (s.locker != nil) == locks }
	return e
}

// laneLockStatements is the statement LockRows returns for m lanes.
func (s *Store) laneLockStatements(m int) []string {
	return s.lockStatements(s.laneClaimSpec(ClaimParams{Queue: "q"}, Limit{}, m))
}

// laneKeysLockStatements is the statement LockRows returns for the
// lanes of m keys.
func (s *Store) laneKeysLockStatements(m int) []string {
	return s.lockStatements(s.laneKeysSpec(ClaimParams{Queue: "q"}, Limit{}, make([]string, m)))
}

// lockStatements is the statement LockRows returns for spec, a claim of
// lanes.
func (s *Store) lockStatements(spec dialect.ClaimSpec) []string {
	stmt, _, err := s.locker.LockRows(s.laneLockSpec(spec))
	if err != nil {
		return nil
	}
	return []string{stmt}
}

// laneKeysClaimStatements are the statements the dialect's Claim sends
// for a claim of the lanes of m keys.
func (s *Store) laneKeysClaimStatements(m int) []string {
	return s.claims(s.d, s.laneKeysSpec(ClaimParams{Queue: "q"}, Limit{}, make([]string, m)))
}

// laneClaimStatements are the statements the dialect's Claim sends for a
// claim of m lanes.
func (s *Store) laneClaimStatements(m int) []string {
	return s.claims(s.d, s.laneClaimSpec(ClaimParams{Queue: "q"}, Limit{}, m))
}

// chosenStatementsWith are the statements the dialect's Claim sends for
// a claim of n chosen keyed items, with the attempt limits of kinds kinds.
func (s *Store) chosenStatementsWith(n, kinds int) []string {
	p := ClaimParams{Queue: "q", Owner: uuid.Nil, Limit: n, Lease: time.Minute}
	if kinds > 0 {
		p.MaxAttempts = make(map[string]int, kinds)
		for k := range kinds {
			p.MaxAttempts[fmt.Sprint("kind", k)] = 1
		}
	}
	return s.claimSpecStatements(s.chosenSpec(p, uuid.Nil, make([]uuid.UUID, n)), n, kinds)
}
