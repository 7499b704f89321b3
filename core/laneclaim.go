package core

import (
	"bytes"
	"context"
	"database/sql"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
	"github.com/plenumdb/plenum/internal/fault"
)

// The claim of keyed items, lane by lane, in the claim's transaction:
//
//  1. read the queue's default limit (and whether it is paused);
//  2. take up to m lanes whose turn has come, with room under their
//     concurrency limits, in turn order, with the dialect's claim or,
//     where it has one, its lock (rows held by another claim are passed
//     over): from here to the commit no other claim takes these lanes;
//  3. count the lanes' claimed items, now that no other claim can add
//     to them, and work out what each lane may give: room under its
//     limits, what its rate allows, and its share of the claim;
//  4. read each lane's first available items, one statement for all;
//  5. share the claim between the lanes by weight, one round at a time,
//     and claim the items chosen with the dialect's claim (where no
//     lane has a rate limit and the claim is one UPDATE ... RETURNING,
//     4 and 5 are one statement: lanefuse.go);
//  6. give each lane its next turn and its rate state.
//
// A lane's limit holds because every claim of its items runs 3 to 6
// under the lane's row lock: the count in 3 sees every claim committed
// before the lock was granted, and no claim commits in between. Nothing
// frees a slot: a slot is a claimed item of the lane, and whatever ends
// a claim ends the item's counting in the same change of its state.

// laneFetchFactor bounds the items one lane offers a claim beyond its
// share, so that a claim can fill places a lane with less work leaves:
// twice the share. maxClaimLanes bounds the lanes one claim takes (the
// parts of one UNION: SQLite takes at most 500).
const (
	laneFetchFactor = 2
	maxClaimLanes   = 100
)

// laneRow is a lane a claim took (laneClaimColumns).
type laneRow struct {
	id      uuid.UUID
	key     string
	turn    time.Time // next_at when taken: the lane's place in line
	now     int64     // the database clock at the claim, in µs
	tat     int64     // the rate's theoretical arrival time, µs; 0 for none
	limit   Limit     // the limit that applies
	running int       // claimed items, counted under the lock
	mine    int       // of which the claiming owner holds
	room    int       // items it may give: under its limits and its share
	units   int       // claims its rate allows now (room when no rate)
	items   []laneItem
	asked   int       // items the claim asked of it: its offer, or its part
	taken   int       // items given to this claim
	spent   int       // rate units those use
	nextAt  time.Time // when its rate allows its next claim, if later than now
	bounded bool      // a claim of keys met its own limit, unread (keyclaim.go)
}

// laneItem is an available item a lane offers (qLaneCandidates).
type laneItem struct {
	id       uuid.UUID
	cost     int
	priority int
	avail    time.Time
}

// claimLanes claims up to n keyed items of p.Queue for p.Owner under
// token, in q: key by key where the queue's default limit bounds nothing
// and the dialect can step through keys (keyclaim.go), lane by lane for
// the rest.
func (s *Store) claimLanes(ctx context.Context, q dialect.Querier, p ClaimParams, token uuid.UUID, n int) ([]Claim, error) {
	def, paused, err := s.queueFlow(ctx, q, p.Queue)
	if err != nil || paused {
		return nil, err
	}
	if !s.caps.RecursiveScan || def.bounds() {
		return s.claimTurns(ctx, q, p, token, def, n, nil)
	}
	out, limited, err := s.claimKeys(ctx, q, p, token, def, n)
	if err != nil || len(out) >= n || (len(out) > 0 && len(limited) == 0) {
		return out, err
	}
	// Keys with limits of their own left places: their lanes, locked and
	// counted. Or no key had work due: the lanes whose turn has come, so
	// that those the claims of keys left with a turn and no work go idle
	// and retention finds them.
	more, err := s.claimTurns(ctx, q, p, token, def, n-len(out), limited)
	if err != nil {
		return nil, err
	}
	return append(out, more...), nil
}

// claimTurns claims up to n keyed items of p.Queue, whose default limit
// is def, lane by lane in turn order, for p.Owner under token, in q: of
// the lanes of keys where it is given keys (those a claim of keys met
// with limits of their own), else of any.
func (s *Store) claimTurns(ctx context.Context, q dialect.Querier, p ClaimParams, token uuid.UUID, def Limit, n int, keys []string) ([]Claim, error) {
	base := lanesFor(def, n)
	m := base
	seen, ok := s.lanesSeen.Load(p.Queue)
	if ok {
		m = seen.(*laneHint).lanes(base, n)
	}
	spec := s.laneClaimSpec(p, def, m)
	if len(keys) > 0 {
		// What these lanes give says nothing of the queue's other
		// lanes: the hint learns nothing from them.
		m, spec = len(keys), s.laneKeysSpec(p, def, keys)
	}
	lanes, err := s.takeLanes(ctx, q, p, def, spec)
	if err != nil || len(lanes) == 0 {
		return nil, err
	}
	if err := fault.Hit(ctx, fault.LanesAfterTake); err != nil {
		return nil, err
	}
	if !ok {
		seen, _ = s.lanesSeen.LoadOrStore(p.Queue, newLaneHint())
	}
	hint := seen.(*laneHint)
	hint.rotate(lanes)
	if err := s.countLanes(ctx, q, p, lanes); err != nil {
		return nil, err
	}
	offer := shareLanes(lanes, n)
	var out []Claim
	if s.fuses(p, lanes) {
		parts := laneParts(lanes, n)
		for i, l := range lanes {
			l.asked = parts[i]
		}
		out, err = s.claimFromLanes(ctx, q, p, token, lanes, parts, false)
		if err != nil {
			return nil, err
		}
		if keys == nil {
			hint.learn(base, m, lanes, len(out), n)
		}
	} else {
		for i, l := range lanes {
			l.asked = offer[i]
		}
		if err := s.laneCandidates(ctx, q, p.Queue, lanes, offer); err != nil {
			return nil, err
		}
		ids := fillFromLanes(lanes, n)
		if keys == nil {
			hint.learn(base, m, lanes, len(ids), n)
		}
		if len(ids) > 0 {
			out, err = s.claimChosen(ctx, q, p, token, ids)
			if err != nil {
				return nil, err
			}
		}
	}
	if err := s.serveLanes(ctx, q, p.Queue, lanes, out); err != nil {
		return nil, err
	}
	if p.Held != nil {
		tellHeld(p, lanes, out)
	}
	return out, nil
}

// tellHeld tells p.Held of the lanes the claim left work of because of
// their limits: work it read and did not take while it had places left,
// or a lane that reached its concurrency limit.
func tellHeld(p ClaimParams, lanes []*laneRow, claimed []Claim) {
	got := map[string]int{}
	for _, c := range claimed {
		got[c.FlowKey]++
	}
	for _, l := range lanes {
		h := Held{Queue: p.Queue, Key: l.key}
		left := len(l.items) > got[l.key]
		switch {
		case l.limit.Concurrency > 0 && l.running+got[l.key] >= l.limit.Concurrency:
			h.Reason = HeldConcurrency
		case l.limit.PerProcess > 0 && l.mine+got[l.key] >= l.limit.PerProcess:
			h.Reason = HeldPerProcess
		case l.limit.Rate > 0 && (left || l.units == 0) && !l.nextAt.IsZero():
			h.Reason, h.Until = HeldRate, l.nextAt
		default:
			continue
		}
		p.Held(h)
	}
}

// queueFlow reads queue's default limit and whether it is paused.
func (s *Store) queueFlow(ctx context.Context, q dialect.Querier, queue string) (Limit, bool, error) {
	var v limitValues
	var paused int
	err := q.QueryRowContext(ctx, s.sql(qQueueFlow), s.d.Bool(true), queue).Scan(append(v.dest(), &paused)...)
	if sqlkit.IsNoRows(err) {
		return Limit{Queue: queue}, false, nil
	}
	if err != nil {
		return Limit{}, false, err
	}
	return v.limit(Limit{Queue: queue}), paused == 1, nil
}

// lanesFor is how many lanes a claim of n items takes: enough for n at
// the default concurrency limit, when there is one, else n spread over
// four lanes, and never more than n (laneHint adds lanes where they hold
// fewer items). Not more: a claim holds the locks of its lanes to its
// commit, and the claims beside it skip them, so that with a few keys
// and several claimers, claims of eight lanes each left the others none
// (10 keys, 4 workers: 0.51 of the rate without keys, against 0.84-0.88
// with four lanes, on PostgreSQL; bench/BENCH.md).
func lanesFor(def Limit, n int) int {
	per := max(1, n/4)
	if def.Concurrency > 0 {
		per = def.Concurrency
	}
	if def.PerProcess > 0 {
		per = min(per, def.PerProcess)
	}
	return max(1, min(n, maxClaimLanes, (n+per-1)/per))
}

// laneHint is what a store has learned of a queue's lanes from its last
// claims: how many lanes a claim takes beyond lanesFor's count, when
// lanes have held less work than that count assumes (many keys of a few
// items each). Without it a claim of n items over keys of two items each
// would come back with a fifth of n, and the claims with them. claims
// counts this store's claims of the queue's lanes, which turn the order
// the lanes give in (rotate). cursor is the last key a claim of keys
// took (keyclaim.go): the next begins after it; keys is what claims of
// keys have learned of how many keys a claim takes, apart from claims of
// lanes, which a queue with limited keys makes too.
type laneHint struct {
	more   atomic.Int32
	claims atomic.Uint32
	cursor atomic.Pointer[string]
	keys   *laneHint
}

func newLaneHint() *laneHint { return &laneHint{keys: &laneHint{}} }

// rotate turns lanes, in the order of their ids, so that the claims of
// one store begin with each lane in turn: a claim's rounds give the
// first lanes first, and a lane whose weight fills a claim on its own
// would otherwise take every claim it is in, the lanes after it in id
// order none, however long their turns had waited.
func (h *laneHint) rotate(lanes []*laneRow) {
	if len(lanes) > 1 {
		k := int(h.claims.Add(1) % uint32(len(lanes)))
		slices.Reverse(lanes[:k])
		slices.Reverse(lanes[k:])
		slices.Reverse(lanes)
	}
}

// lanes is how many lanes a claim of n takes: at least base, more when
// claims have found the lanes short of work.
func (h *laneHint) lanes(base, n int) int {
	return max(base, min(int(h.more.Load()), n, maxClaimLanes))
}

// learn sets what the next claim takes from what this one found: it
// asked for m lanes, got lanes, and they gave k of the n items it asked
// for. Where every lane asked for came and they fell short together,
// the next claim takes as many as their yield needs for n; where the
// claim was filled, as many as gave to it.
func (h *laneHint) learn(base, m int, lanes []*laneRow, k, n int) {
	switch {
	case k >= n:
		used := 0
		for _, l := range lanes {
			if l.taken > 0 {
				used++
			}
		}
		if m > base {
			h.more.Store(int32(used))
		}
	case len(lanes) < m:
		// Fewer lanes have their turn than were asked for: more would
		// find none.
	case k == 0:
		h.more.Store(int32(min(2*m, n, maxClaimLanes)))
	default:
		h.more.Store(int32(min((n*len(lanes)+k-1)/k, n, maxClaimLanes)))
	}
}

// takeLanes takes (queryLanes) the lanes of p.Queue spec asks for
// (laneClaimSpec, laneKeysSpec): whose turn has come and that have room,
// in turn order.
func (s *Store) takeLanes(ctx context.Context, q dialect.Querier, p ClaimParams, def Limit, spec dialect.ClaimSpec) ([]*laneRow, error) {
	rows, err := s.queryLanes(ctx, q, spec)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*laneRow
	for rows.Next() {
		l := &laneRow{}
		var served, tat timeValue
		served.d, tat.d = s.d, s.d
		var v limitValues
		if err := rows.Scan(append([]any{&l.id, &l.key, &served, &tat}, v.dest()...)...); err != nil {
			return nil, err
		}
		l.now = served.t.UnixMicro()
		if !tat.t.IsZero() {
			l.tat = tat.t.UnixMicro()
		}
		l.limit = def
		if v.weight.Valid {
			l.limit = v.limit(Limit{Queue: p.Queue, Key: l.key})
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// The claim took them in turn order; within it, they give in the
	// order of their ids (rows come back in no promised order), turned
	// by one each claim (laneHint.rotate).
	slices.SortFunc(out, func(a, b *laneRow) int { return bytes.Compare(a.id[:], b.id[:]) })
	return out, nil
}

// queryLanes takes the lanes spec asks for. Where the dialect has a
// dialect.RowLocker (its Claim is several statements), it only locks
// them, reading the database clock in place of served_at, and serveLanes
// writes each once; elsewhere it claims them, which sends each to the
// back of the line in the same statement, and serveLanes writes again
// only those whose turn or rate state is otherwise.
func (s *Store) queryLanes(ctx context.Context, q dialect.Querier, spec dialect.ClaimSpec) (*sql.Rows, error) {
	if s.locker == nil {
		return s.d.Claim(ctx, q, spec)
	}
	stmt, args, err := s.locker.LockRows(s.laneLockSpec(spec))
	if err != nil {
		return nil, err
	}
	return q.QueryContext(ctx, stmt, args...)
}

// laneLockSpec is spec, a claim of lanes, as LockRows takes it: the same
// rows, with the database clock read in place of served_at, which the
// claim would have set to it.
func (s *Store) laneLockSpec(spec dialect.ClaimSpec) dialect.ClaimSpec {
	cols := slices.Clone(spec.Returning)
	cols[slices.Index(cols, "served_at")] = s.expand.Replace("{now}")
	spec.Returning = cols
	return spec
}

// laneClaimSpec is the claim of up to m lanes of p.Queue under the
// queue's default limit def.
func (s *Store) laneClaimSpec(p ClaimParams, def Limit, m int) dialect.ClaimSpec {
	return dialect.ClaimSpec{
		Table:      s.names.Lanes,
		Key:        "id",
		Filter:     s.expand.Replace(laneClaimFilter),
		FilterArgs: []any{p.Queue, s.d.UUID(p.Owner), def.Concurrency, def.Concurrency, def.PerProcess, s.d.UUID(p.Owner), def.PerProcess},
		OrderBy:    laneClaimOrderBy,
		Limit:      m,
		Set:        s.expand.Replace(laneClaimSet),
		Returning:  laneClaimColumns,
	}
}

// laneKeysSpec is laneClaimSpec for the lanes of keys alone.
func (s *Store) laneKeysSpec(p ClaimParams, def Limit, keys []string) dialect.ClaimSpec {
	spec := s.laneClaimSpec(p, def, len(keys))
	spec.Filter += " AND lane_key IN (" + sqlkit.Placeholders(len(keys)) + ")"
	for _, k := range keys {
		spec.FilterArgs = append(spec.FilterArgs, k)
	}
	return spec
}

// countLanes counts the claimed items of the lanes that have a
// concurrency limit, under the locks takeLanes took.
func (s *Store) countLanes(ctx context.Context, q dialect.Querier, p ClaimParams, lanes []*laneRow) error {
	byKey := map[string]*laneRow{}
	var keys []string
	for _, l := range lanes {
		if l.limit.Concurrency > 0 || l.limit.PerProcess > 0 {
			byKey[l.key] = l
			keys = append(keys, l.key)
		}
	}
	counts, err := s.laneCounts(ctx, q, p.Queue, p.Owner, keys)
	for key, c := range counts {
		byKey[key].running, byKey[key].mine = c.running, c.mine
	}
	return err
}

// laneCount is a lane's claimed items, and those one owner holds.
type laneCount struct{ running, mine int }

// laneCounts counts the claimed items of keys' lanes of queue, and those
// owner holds; a lane with none is missing from the map.
func (s *Store) laneCounts(ctx context.Context, q dialect.Querier, queue string, owner uuid.UUID, keys []string) (map[string]laneCount, error) {
	out := map[string]laneCount{}
	for _, chunk := range chunks(keys, s.inListMax(2)) {
		args := make([]any, 0, len(chunk)+2)
		args = append(args, s.d.UUID(owner), queue)
		for _, k := range chunk {
			args = append(args, k)
		}
		rows, err := q.QueryContext(ctx, s.sql(qLaneCounts(len(chunk))), args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var key string
			var running, mine sql.NullInt64
			if err := rows.Scan(&key, &running, &mine); err != nil {
				rows.Close()
				return nil, err
			}
			out[key] = laneCount{int(running.Int64), int(mine.Int64)}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// shareLanes works out, for each lane, the items it may give (room) and
// the rate units it may use, and returns how many items to read of each:
// at most its room, and at most laneFetchFactor times its share of n by
// weight.
func shareLanes(lanes []*laneRow, n int) []int {
	total := 0
	for _, l := range lanes {
		total += l.limit.weight()
	}
	offer := make([]int, len(lanes))
	for i, l := range lanes {
		room := n
		if c := l.limit.Concurrency; c > 0 {
			room = min(room, c-l.running)
		}
		if c := l.limit.PerProcess; c > 0 {
			room = min(room, c-l.mine)
		}
		l.units = room
		if l.limit.Rate > 0 {
			l.units = l.limit.rateAllows(l.now, l.tat)
			if l.units == 0 {
				room = 0
			} else {
				room = min(room, l.units)
			}
		}
		l.room = max(0, room)
		share := (laneFetchFactor*n*l.limit.weight() + total - 1) / total
		offer[i] = min(l.room, max(1, share))
		if l.limit.Rate > 0 && offer[i] == l.room {
			// One more than the rate allows, to tell whether it holds
			// work back (Held); never claimed (canGive stops at room).
			offer[i]++
		}
	}
	return offer
}

// laneCandidates reads the items the lanes offer: offer[i] of lanes[i],
// in claim order.
func (s *Store) laneCandidates(ctx context.Context, q dialect.Querier, queue string, lanes []*laneRow, offer []int) error {
	// One statement reads the same number of each lane, the most any
	// offers, so that its text depends on two counts only; each lane
	// keeps its own offer of what comes back. Where the dialect binds
	// the lanes as lists, each lane's offer is bound, in one text.
	f := 0
	var keys []string
	var counts []int
	byKey := map[string]*laneRow{}
	want := map[string]int{}
	for i, l := range lanes {
		if offer[i] == 0 {
			continue
		}
		f = max(f, offer[i])
		keys, counts = append(keys, l.key), append(counts, offer[i])
		byKey[l.key], want[l.key] = l, offer[i]
	}
	if f == 0 {
		return nil
	}
	var stmt string
	var args []any
	if s.keys != nil {
		k, c := s.keys.KeyList(keys, counts)
		stmt, args = qLaneCandidatesListed(s.keys), []any{k, c, queue}
	} else {
		stmt = qLaneCandidates(s.d, len(keys), f)
		for _, k := range keys {
			args = append(args, queue, k)
		}
	}
	rows, err := q.QueryContext(ctx, s.sql(stmt), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var it laneItem
		var key string
		var cost sql.NullInt64
		avail := timeValue{d: s.d}
		if err := rows.Scan(&it.id, &key, &cost, &it.priority, &avail); err != nil {
			return err
		}
		it.cost, it.avail = max(1, int(cost.Int64)), avail.t
		if l := byKey[key]; l != nil {
			l.items = append(l.items, it)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, l := range lanes {
		slices.SortFunc(l.items, func(a, b laneItem) int {
			if a.priority != b.priority {
				return a.priority - b.priority
			}
			if c := a.avail.Compare(b.avail); c != 0 {
				return c
			}
			return strings.Compare(a.id.String(), b.id.String())
		})
		l.items = l.items[:min(len(l.items), want[l.key])]
	}
	return nil
}

// fillFromLanes shares n places between the lanes, in rounds: each round
// every lane, in turn order, gives up to its weight in items, each in its
// own claim order, while it has room and rate units for the next. It
// returns the ids chosen.
func fillFromLanes(lanes []*laneRow, n int) []uuid.UUID {
	var ids []uuid.UUID
	for len(ids) < n {
		gave := false
		for _, l := range lanes {
			for k := 0; k < l.limit.weight() && len(ids) < n && l.canGive(); k++ {
				it := l.items[l.taken]
				l.taken++
				l.spent += it.cost
				ids = append(ids, it.id)
				gave = true
			}
		}
		if !gave {
			break
		}
	}
	return ids
}

// canGive reports whether l may give its next item: it has one, room for
// it, and the rate units it costs. An item that costs more than the
// burst goes when the lane's bucket is full and it is the lane's first.
func (l *laneRow) canGive() bool {
	if l.taken >= len(l.items) || l.taken >= l.room {
		return false
	}
	if l.limit.Rate == 0 {
		return true
	}
	cost := l.items[l.taken].cost
	return l.spent+cost <= l.units || (l.taken == 0 && l.units >= l.limit.burst())
}

// claimChosen claims the chosen items, with the dialect's claim (an item
// another transaction holds, a cancel say, is passed over).
func (s *Store) claimChosen(ctx context.Context, q dialect.Querier, p ClaimParams, token uuid.UUID, ids []uuid.UUID) ([]Claim, error) {
	return s.claimWith(ctx, q, p, token, s.chosenSpec(p, token, ids), len(ids))
}

// chosenSpec is the claim of the items ids for p under token: the
// queue's claim, on the items chosen instead of the queue's first.
func (s *Store) chosenSpec(p ClaimParams, token uuid.UUID, ids []uuid.UUID) dialect.ClaimSpec {
	spec := s.claimSpec(p, token, len(ids))
	spec.Filter = "state = 'available' AND " + s.idsIn(len(ids))
	spec.FilterArgs = s.idArgs(ids)
	spec.Seek = nil
	// Every chosen item is asked for (the limit is their number): the
	// order only sets the order rows are locked in, and the key's is the
	// one the ids are found in, with no sort.
	spec.OrderBy = "id"
	return spec
}

// serveLanes gives each lane a claim took its next turn and rate state:
//
//   - a lane whose rate is spent: when its next claim's units come back;
//   - a lane that gave what the claim asked of it, or was passed over:
//     now, at the back of the line;
//   - a lane that ran dry (dry), its items claimed or not: the time of
//     its first available item, or none (NULL) when it has none; an item
//     of it handed back wakes it (handBack).
func (s *Store) serveLanes(ctx context.Context, q dialect.Querier, queue string, lanes []*laneRow, claimed []Claim) error {
	got := map[string]int{}
	spent := map[string]int{}
	for _, c := range claimed {
		got[c.FlowKey]++
		spent[c.FlowKey] += max(1, c.Cost)
	}
	type served struct {
		next, tat any // offsets from now in µs, or nil
	}
	plan := make([]served, len(lanes))
	var idle []string
	for i, l := range lanes {
		var tatOffset any
		next := int64(0)
		if l.limit.Rate > 0 {
			cell := l.limit.cellTime()
			tat := max(l.tat, l.now) + int64(spent[l.key])*cell
			if spent[l.key] > 0 {
				tatOffset = tat - l.now
			}
			// The next claim's unit comes back when tat is within the
			// burst's tolerance again.
			next = max(0, tat-int64(l.limit.burst())*cell+cell-l.now)
		}
		if got[l.key] == 0 && len(l.items) > 0 && next == 0 {
			// Passed over because the claim was full, or its items were
			// held: ahead of the lanes this claim served.
			next = -1
		}
		plan[i] = served{next: next, tat: tatOffset}
		if l.limit.Rate > 0 && next > 0 {
			l.nextAt = time.UnixMicro(l.now + next).UTC()
		}
		if l.dry(got[l.key]) {
			idle = append(idle, l.key)
		}
	}
	if len(idle) > 0 {
		// The lanes that ran dry get the time of their first available
		// item, or no turn. Their claimed items do not keep them in line:
		// whatever hands one back wakes its lane (handBack), and waits
		// for this claim's lock on it to do so, so that it cannot come
		// back unseen between this read and the commit.
		first, err := s.laneFirst(ctx, q, queue, idle)
		if err != nil {
			return err
		}
		if err := fault.Hit(ctx, fault.LaneIdleAfterRead); err != nil {
			return err
		}
		for i, l := range lanes {
			if !slices.Contains(idle, l.key) {
				continue
			}
			at, ok := first[l.key]
			if !ok {
				plan[i].next = nil
				continue
			}
			plan[i].next = max(plan[i].next.(int64), at.UnixMicro()-l.now)
		}
	}
	// A claim of lanes sent every lane it took to the back of the line:
	// only those whose turn or rate state is otherwise are written again.
	// Lanes only locked (queryLanes) are all written, once.
	var apart []int
	for i := range lanes {
		if s.locker != nil || plan[i].next != int64(0) || plan[i].tat != nil {
			apart = append(apart, i)
		}
	}
	if len(apart) == 0 {
		return nil
	}
	args := make([]any, 0, 5*len(apart))
	for _, i := range apart {
		args = append(args, s.d.UUID(lanes[i].id), plan[i].next)
	}
	for _, i := range apart {
		args = append(args, s.d.UUID(lanes[i].id), plan[i].tat)
	}
	for _, i := range apart {
		args = append(args, s.d.UUID(lanes[i].id))
	}
	write := qLanesServed(len(apart))
	if s.locker != nil {
		write = qLanesTaken(len(apart))
	}
	_, err := q.ExecContext(ctx, s.sql(write), args...)
	return err
}

// dry reports whether l, which gave got items to the claim, has no
// available item left that is due: it held fewer than the claim asked of
// it (its offer or its part), and gave every one it held (an item passed
// over, or held by another transaction, keeps the lane in line).
func (l *laneRow) dry(got int) bool {
	return len(l.items) < l.asked && got == len(l.items)
}

// laneFirst reads when the first available item of each of keys' lanes
// becomes claimable; a lane with none is missing from the map.
func (s *Store) laneFirst(ctx context.Context, q dialect.Querier, queue string, keys []string) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	for _, chunk := range chunks(keys, s.inListMax(1)) {
		args := make([]any, 0, len(chunk)+1)
		args = append(args, queue)
		for _, k := range chunk {
			args = append(args, k)
		}
		rows, err := q.QueryContext(ctx, s.sql(qLaneFirst(len(chunk))), args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var key string
			at := timeValue{d: s.d}
			if err := rows.Scan(&key, &at); err != nil {
				rows.Close()
				return nil, err
			}
			if !at.t.IsZero() {
				out[key] = at.t
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
