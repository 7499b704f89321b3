package core

import (
	"context"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
)

// A claim of lanes that need no rate units and carry no attempt limits
// claims their items in the statement that finds them, where the
// dialect's claim is one UPDATE ... RETURNING: each lane's first
// available items, at most its part of the claim (laneParts), are the
// claim's candidates, where a claim with a rate limit reads them first
// (laneCandidates) and claims those fillFromLanes chose. The shares are
// the same; what a lane cannot give is left unclaimed, not given to
// another lane (the next claim takes more lanes: laneHint). A dialect
// whose claim is a locking read, an update and a read-back (MySQL) reads
// the candidates first: a locking read through the lanes' reads did far
// worse on MariaDB (bench/BENCH.md).

// fuses reports whether the claim of lanes for p claims its items in
// one statement: the dialect's claim is one statement, no lane has a
// rate limit (whose units depend on the items' costs, read first), and
// p carries no attempt limits (a third count the statements' catalog
// does not take).
func (s *Store) fuses(p ClaimParams, lanes []*laneRow) bool {
	if !s.caps.ReturningUpdate || len(p.MaxAttempts) > 0 {
		return false
	}
	for _, l := range lanes {
		if l.limit.Rate > 0 {
			return false
		}
	}
	return true
}

// laneParts shares n places between the lanes as fillFromLanes would
// if each had as many items as its room: in rounds, each lane in turn
// order giving up to its weight while it has room. It returns each
// lane's part.
func laneParts(lanes []*laneRow, n int) []int {
	parts := make([]int, len(lanes))
	given := 0
	for given < n {
		gave := false
		for i, l := range lanes {
			for k := 0; k < l.limit.weight() && given < n && parts[i] < l.room; k++ {
				parts[i]++
				given++
				gave = true
			}
		}
		if !gave {
			break
		}
	}
	return parts
}

// claimFromLanes claims, for p under token, up to parts[i] of the first
// available items of each lanes[i], in one statement (each key's rows
// locked as its read meets them, where lockEach and the dialect can:
// dialect.KeyLockLister), and records what
// each lane gave as the two-step claim would have seen it: taken, and
// items, what it gave (all it had, when it gave less than its part), or
// one unread item where it had room and no part.
func (s *Store) claimFromLanes(ctx context.Context, q dialect.Querier, p ClaimParams, token uuid.UUID, lanes []*laneRow, parts []int, lockEach bool) ([]Claim, error) {
	var keys []string
	var counts []int
	for i, l := range lanes {
		if parts[i] > 0 {
			keys = append(keys, l.key)
			counts = append(counts, parts[i])
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	out, err := s.claimWith(ctx, q, p, token, s.fusedSpec(p, token, len(keys), s.lanePartArgs(p.Queue, keys, counts), lockEach), p.Limit)
	if err != nil {
		return nil, err
	}
	got := map[string]int{}
	for _, c := range out {
		got[c.FlowKey]++
	}
	for i, l := range lanes {
		l.taken = got[l.key]
		l.items = make([]laneItem, l.taken)
		if parts[i] == 0 && l.room > 0 {
			// Passed over, the claim full before its turn (weights):
			// it may hold work, as a lane whose items were read and
			// not taken does, and keeps a turn (serveLanes) rather
			// than be looked at as idle.
			l.items = make([]laneItem, 1)
		}
	}
	return out, nil
}

// fusedSpec is the claim of the items of m lanes, the lanes and their
// parts bound in args (lanePartArgs). The parts are bound, not written,
// so that the statement's text, and the plan a server keeps for it,
// depend on the number of lanes alone, or on nothing where the dialect
// binds the lanes as lists (dialect.KeyLister).
func (s *Store) fusedSpec(p ClaimParams, token uuid.UUID, m int, args []any, lockEach bool) dialect.ClaimSpec {
	spec := s.claimSpec(p, token, MaxClaimLimit)
	spec.Filter = s.expand.Replace("state = 'available' AND id IN (" + s.lanePartsSQL(m, lockEach) + ")")
	spec.FilterArgs = args
	spec.Seek = nil
	spec.OrderBy = "id"
	return spec
}

// lanePartsSQL is the ids of the first available items of m lanes of
// one queue, as many of each as bound (lanePartArgs), in claim order
// along items_flow: the dialect's read of several keys at once, where it
// has one, else one subquery a lane (qLaneParts).
func (s *Store) lanePartsSQL(m int, lockEach bool) string {
	if lockEach && s.keyLocks != nil {
		return s.keyLocks.FirstPerKeyLocked("{items}", "id", "flow_key", laneFilter, laneOrder)
	}
	if s.keys != nil {
		return s.keys.FirstPerKey("{items}", "id", "flow_key", laneFilter, laneOrder)
	}
	return qLaneParts(s.d, m)
}

// lanePartArgs binds lanePartsSQL's lanes, keys, of queue, and their parts,
// counts: two lists and the queue where the dialect binds lists, else the
// queue, key and part of each lane.
func (s *Store) lanePartArgs(queue string, keys []string, counts []int) []any {
	if s.keys != nil {
		k, c := s.keys.KeyList(keys, counts)
		return []any{k, c, queue}
	}
	args := make([]any, 0, 3*len(keys))
	for i, k := range keys {
		args = append(args, queue, k, counts[i])
	}
	return args
}

// lanePart is one lane's part of qLaneParts: the ids of its first
// available items, as many as bound, in claim order along items_flow.
func lanePart(d dialect.Dialect, i int) string {
	return "SELECT id FROM (SELECT id FROM {items} WHERE queue = ? AND flow_key = ? AND state = 'available' AND available_at <= {now}" +
		" ORDER BY priority, available_at, id" + boundLimit(d) + ") p" + strconv.Itoa(i)
}

// boundLimit is the dialect's LIMIT clause with its count bound: the
// dialects whose claim is one UPDATE ... RETURNING, the only ones that
// send qLaneParts, take a bound count where they take a written one.
func boundLimit(d dialect.Dialect) string {
	return strings.Replace(d.Limit(1), "1", "?", 1)
}

// qLaneParts is the ids of the first items of m lanes of one queue, as
// many of each as bound, in one statement.
func qLaneParts(d dialect.Dialect, m int) string {
	var b strings.Builder
	for i := range m {
		if i > 0 {
			b.WriteString(" UNION ALL ")
		}
		b.WriteString(lanePart(d, i))
	}
	return b.String()
}
