package core

import (
	"context"
	"database/sql"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/fault"
)

// A claim of keyed items in a queue whose default limit bounds nothing
// takes keys, not lanes: from where this store's last such claim of the
// queue stopped, the next keys with due work in key order (qNextKeys,
// one index probe a key), each given its part of the claim by weight
// (laneParts), and their first items claimed as the lanes' are
// (claimFromLanes, or read and chosen). No lane row is taken or
// written: a key without a limit has no count to keep under a lock, and
// its place in key order is its turn. So the claim costs about what the
// queue's own claim does, whatever the number of keys, where a claim of
// lanes writes each lane it takes (half a write an item with keys of two
// items each: bench/BENCH.md).
//
// A key with a limit of its own among them keeps its part of the claim
// out of this one: the claim of lanes (claimTurns) fills what is left,
// under the lanes' locks, so that a limited key is neither claimed
// beyond its limit nor starved by the unlimited ones.
//
// Lanes are still opened and woken by whatever gives a key work (an
// enqueue, a hand-back, a revive), so that a limit set later finds them
// with their turns; a turn left behind by these claims (not set idle
// when the key ran dry) costs a claim of lanes one look, and retention
// deletes such a lane once it has had no work for its age.

// keyReads bounds the reads of keys one claim makes: a second when the
// first keys gave less than asked, as when a claim in another process
// took the same keys' items first.
const keyReads = 2

// claimKeys claims up to n keyed items of p.Queue, whose default limit
// def bounds nothing, key by key, for p.Owner under token, in q. limited
// are the keys it met with limits of their own, whose parts it left to
// the claim of their lanes.
func (s *Store) claimKeys(ctx context.Context, q dialect.Querier, p ClaimParams, token uuid.UUID, def Limit, n int) (out []Claim, limited []string, err error) {
	hint := newLaneHint()
	if seen, ok := s.lanesSeen.Load(p.Queue); ok {
		hint = seen.(*laneHint)
	}
	base := lanesFor(def, n)
	for round := 0; round < keyReads && len(out) < n && len(limited) == 0; round++ {
		want := n - len(out)
		m := hint.keys.lanes(base, want)
		lanes, at, err := s.nextKeys(ctx, q, p, def, hint, m)
		if err != nil {
			return nil, nil, err
		}
		if len(lanes) == 0 {
			break
		}
		if round == 0 {
			seen, _ := s.lanesSeen.LoadOrStore(p.Queue, hint)
			hint = seen.(*laneHint)
		}
		if err := fault.Hit(ctx, fault.KeysAfterRead); err != nil {
			return nil, nil, err
		}
		got, left, err := s.claimKeyParts(ctx, q, p, token, lanes, want)
		if err != nil {
			return nil, nil, err
		}
		hint.served(at, lanes)
		limited = left
		if len(limited) == 0 {
			// Places left to limited keys are not places the keys
			// could not fill.
			hint.keys.learn(base, m, lanes, len(got), want)
		}
		out = append(out, got...)
		if len(lanes) < m {
			// Every key with due work was offered a part.
			break
		}
	}
	return out, limited, nil
}

// claimKeyParts claims the parts of want places (laneParts) of the keys
// lanes read (nextKeys) that have no limit of their own; the parts of
// those that have one are left (limited, their keys).
func (s *Store) claimKeyParts(ctx context.Context, q dialect.Querier, p ClaimParams, token uuid.UUID, lanes []*laneRow, want int) (out []Claim, limited []string, err error) {
	for _, l := range lanes {
		l.room, l.units = want, want
	}
	parts := laneParts(lanes, want)
	free := make([]*laneRow, 0, len(lanes))
	reserved := 0
	for i, l := range lanes {
		if l.bounded || l.limit.bounds() {
			limited = append(limited, l.key)
			reserved += parts[i]
			parts[i], l.room = 0, 0
			continue
		}
		l.asked = parts[i]
		free = append(free, l)
	}
	if len(free) == 0 {
		return nil, limited, nil
	}
	if s.fuses(p, free) {
		// No lane lock keeps claims of the same keys apart: each key's
		// read passes over the rows another claim holds.
		out, err = s.claimFromLanes(ctx, q, p, token, lanes, parts, true)
		return out, limited, err
	}
	offer := shareLanes(free, want)
	for i, l := range free {
		l.asked = offer[i]
	}
	if err := s.laneCandidates(ctx, q, p.Queue, free, offer); err != nil {
		return nil, nil, err
	}
	ids := fillFromLanes(free, want-reserved)
	if len(ids) == 0 {
		return nil, limited, nil
	}
	out, err = s.claimChosen(ctx, q, p, token, ids)
	return out, limited, err
}

// served moves hint's cursor back from at, where nextKeys left it, to
// the last of lanes that gave the claim items (taken), unless another
// claim has moved it since: keys read and passed over because the claim
// was full (a heavy key's weight took its places) come first in the
// next claim, so that no key is passed over twice in a row.
func (h *laneHint) served(at *string, lanes []*laneRow) {
	for i := len(lanes) - 1; i >= 0; i-- {
		if lanes[i].taken > 0 {
			if key := lanes[i].key; at == nil || key != *at {
				h.cursor.CompareAndSwap(at, &key)
			}
			return
		}
	}
}

// nextKeys reads up to m keys of p.Queue with due work (qNextKeys), from
// where hint's cursor stands, going round to the first key when it runs
// out, and moves the cursor past them, returning where it set it. Where
// another claim of this store moved the cursor meanwhile, it reads again
// from there (twice at most), so that claims begun together take
// different keys rather than the same keys' items, which the first
// would hold and the others pass over.
func (s *Store) nextKeys(ctx context.Context, q dialect.Querier, p ClaimParams, def Limit, hint *laneHint, m int) ([]*laneRow, *string, error) {
	for try := 0; ; try++ {
		at := hint.cursor.Load()
		after := ""
		if at != nil {
			after = *at
		}
		lanes, err := s.readKeys(ctx, q, p, def, after, m)
		if err != nil {
			return nil, nil, err
		}
		last := after
		if len(lanes) > 0 {
			last = lanes[len(lanes)-1].key
		}
		if len(lanes) < m && after != "" {
			more, err := s.readKeys(ctx, q, p, def, "", m-len(lanes))
			if err != nil {
				return nil, nil, err
			}
			have := make(map[string]bool, len(lanes))
			for _, l := range lanes {
				have[l.key] = true
			}
			for _, l := range more {
				if !have[l.key] {
					lanes = append(lanes, l)
					last = l.key
				}
			}
		}
		if hint.cursor.CompareAndSwap(at, &last) || try == 2 {
			return lanes, &last, nil
		}
	}
}

// readKeys reads up to m keys of p.Queue with due work after the key
// after, in key order, each with def for its limit, or its own weight,
// or marked bounded where its own limit bounds claims (the claim of its
// lane reads that limit).
func (s *Store) readKeys(ctx context.Context, q dialect.Querier, p ClaimParams, def Limit, after string, m int) ([]*laneRow, error) {
	rows, err := q.QueryContext(ctx, s.sql(s.nextKeysSQL), p.Queue, after, p.Queue, m, p.Queue, s.d.UUID(p.Owner))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*laneRow
	for rows.Next() {
		l := &laneRow{limit: def}
		var own sql.NullInt64
		if err := rows.Scan(&l.key, &own); err != nil {
			return nil, err
		}
		switch {
		case !own.Valid:
		case own.Int64 == 0:
			l.bounded = true
		default:
			l.limit = Limit{Queue: p.Queue, Key: l.key, Weight: int(own.Int64)}
		}
		out = append(out, l)
	}
	return out, rows.Err()
}
