package browse

import (
	"context"
	"database/sql"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect/sqlkit"
	"github.com/plenumdb/plenum/internal/storesql"
	"github.com/plenumdb/plenum/migrations"
)

// LanesParams choose the lanes of a queue Lanes describes: the keys of
// its items that carry a flow key (core.ItemSpec.FlowKey).
type LanesParams struct {
	// Queue is the queue whose lanes are read; required.
	Queue string
	// Key, when set, describes that key's lane only.
	Key string
	// After, when Key is empty, starts the page after this key (a keyset
	// page of keys, in the database's order of keys).
	After string
	// Limit is the most lanes returned: 1 to MaxListLimit; 0 means
	// DefaultListLimit.
	Limit int
	// CountCap is where each lane's counts stop: 1 to MaxCountCap; 0
	// means DefaultCountCap.
	CountCap int64
}

// LimitSource says where the limit that applies to a lane comes from.
type LimitSource string

// The sources of a lane's limit.
const (
	// LimitOwn is the key's own limit (core.Limit with Key set).
	LimitOwn LimitSource = "own"
	// LimitDefault is the queue's default (core.Limit with Key "").
	LimitDefault LimitSource = "default"
	// LimitNone says neither is set: the key is not limited.
	LimitNone LimitSource = "none"
)

// Lanes is one page of a queue's lanes, with the queue's default limit.
type Lanes struct {
	Queue string
	// Default is the queue's default limit, when DefaultSet says one is
	// set; it applies to every key without a limit of its own.
	Default    core.Limit
	DefaultSet bool
	// Lanes are the page's lanes in key order.
	Lanes []Lane
	// Next is the After of the next page; "" when this page was the last
	// (it held fewer lanes than the Limit).
	Next string
	// Paused says the queue is paused: no claim takes its items.
	Paused bool
	// Now is the database clock when the page was read.
	Now time.Time
}

// Lane is one key of a queue as flow control sees it.
type Lane struct {
	Key string
	// Limit is the limit that applies to the key, as Source says: its
	// own, the queue's default (then Limit.Key is ""), or none (the zero
	// Limit).
	Limit  core.Limit
	Source LimitSource
	// Claimed counts the key's claimed items: the slots of its
	// concurrency limit in use. Waiting counts its available items, due
	// or not. Each stops at the CountCap; ClaimedCapped and WaitingCapped
	// say which did (there are at least that many).
	Claimed, Waiting             int64
	ClaimedCapped, WaitingCapped bool
	// NextAt is the lane's turn on the database clock: when a claim may
	// next take its items (after Now when its rate is spent or its first
	// item is not due yet); zero when the lane has no available work. A
	// lane whose last items a claim took keeps a turn at or before Now
	// until a claim finds it dry, which may be the claim that took them
	// (when it asked for more). In a queue claimed key by key (no limit
	// bounds its keys: core's claim of keys), claims take no lane and
	// leave each turn as the lane's last work set it, until a claim
	// finds no key with work due and takes the lanes, setting them idle.
	NextAt time.Time
}

// Lanes reads a page of a queue's lanes in key order, each with the limit
// that applies to it, its claimed and available items counted up to
// p.CountCap, and its next turn, and the queue's default limit. A page
// costs one read of the lanes' key index, one of the queue's row, and per
// lane two bounded ranges of the items' flow indexes (items_flowing,
// items_flow): the same however many items the lanes hold.
func (r *Reader) Lanes(ctx context.Context, p LanesParams) (Lanes, error) {
	if err := r.ready(); err != nil {
		return Lanes{}, err
	}
	limit, err := listLimit(p.Limit)
	if err != nil {
		return Lanes{}, err
	}
	if p.Queue == "" {
		return Lanes{}, invalid("Queue", "must not be empty")
	}
	if err := r.s.LookupName("Queue", p.Queue, migrations.MaxQueueLen); err != nil {
		return Lanes{}, err
	}
	if err := r.s.LookupName("Key", p.Key, migrations.MaxFlowKeyLen); err != nil {
		return Lanes{}, err
	}
	if err := r.s.LookupName("After", p.After, migrations.MaxFlowKeyLen); err != nil {
		return Lanes{}, err
	}
	if p.CountCap == 0 {
		p.CountCap = DefaultCountCap
	}
	if p.CountCap < 1 || p.CountCap > MaxCountCap {
		return Lanes{}, invalid("CountCap", "%d is outside [1, %d]", p.CountCap, MaxCountCap)
	}
	out := Lanes{Queue: p.Queue}
	if out.Now, err = r.store.Now(ctx); err != nil {
		return Lanes{}, err
	}
	if out.Default, out.DefaultSet, out.Paused, err = r.queueLimit(ctx, p.Queue); err != nil {
		return Lanes{}, err
	}
	// The first page has no lower bound: Oracle reads an empty string as
	// NULL, which no key is greater than.
	q, args := qLanePageFirst(r.s.Dialect, limit), []any{p.Queue}
	switch {
	case p.Key != "":
		q, args = qLaneOne, []any{p.Queue, p.Key}
	case p.After != "":
		q, args = qLanePageNext(r.s.Dialect, limit), []any{p.Queue, p.After}
	}
	rows, err := storesql.Rows(ctx, r.s.Handle, "lanes", r.s.SQL(q), r.scanLane(p.Queue), args...)
	if err != nil {
		return Lanes{}, err
	}
	for i := range rows {
		l := &rows[i]
		switch {
		case l.Source == LimitOwn:
		case out.DefaultSet:
			l.Limit, l.Source = out.Default, LimitDefault
		default:
			l.Limit, l.Source = core.Limit{}, LimitNone
		}
		if err := r.laneCounts(ctx, p.Queue, l, p.CountCap); err != nil {
			return Lanes{}, err
		}
	}
	out.Lanes = rows
	if p.Key == "" && len(rows) == limit {
		out.Next = rows[len(rows)-1].Key
	}
	return out, nil
}

// scanLane reads a row of qLanePage: the key, its turn and its own limit
// (Source LimitOwn when it has one, "" otherwise).
func (r *Reader) scanLane(queue string) func(storesql.Scanner) (Lane, error) {
	return func(row storesql.Scanner) (Lane, error) {
		var l Lane
		var v limitValues
		next := storesql.Time{Dialect: r.s.Dialect}
		if err := row.Scan(append([]any{&l.Key, &next}, v.dest()...)...); err != nil {
			return Lane{}, err
		}
		l.NextAt = next.T
		if v.weight.Valid {
			l.Limit, l.Source = v.limit(core.Limit{Queue: queue, Key: l.Key}), LimitOwn
		}
		return l, nil
	}
}

// queueLimit reads the queue's default limit, whether one is set, and
// whether the queue is paused.
func (r *Reader) queueLimit(ctx context.Context, queue string) (core.Limit, bool, bool, error) {
	var v limitValues
	var paused int64
	err := r.s.Read(ctx, "queue limit", func() error {
		v, paused = limitValues{}, 0
		err := r.s.DB.QueryRowContext(ctx, r.s.SQL(qLaneQueueLimit), r.s.Dialect.Bool(true), queue).Scan(append([]any{&paused}, v.dest()...)...)
		if sqlkit.IsNoRows(err) {
			return nil
		}
		return err
	})
	if err != nil || !v.weight.Valid {
		return core.Limit{}, false, paused == 1, err
	}
	return v.limit(core.Limit{Queue: queue}), true, paused == 1, nil
}

// laneCounts counts l's claimed and available items, each up to capN.
func (r *Reader) laneCounts(ctx context.Context, queue string, l *Lane, capN int64) error {
	q := r.s.SQL(qLaneItemCounts(r.s.Dialect, int(capN)+1))
	return r.s.Read(ctx, "lane counts", func() error {
		rows, err := r.s.DB.QueryContext(ctx, q, queue, l.Key, queue, l.Key)
		if err != nil {
			return err
		}
		defer rows.Close()
		l.Claimed, l.Waiting = 0, 0
		for rows.Next() {
			var st string
			var n int64
			if err := rows.Scan(&st, &n); err != nil {
				return err
			}
			switch core.State(st) {
			case core.StateClaimed:
				l.Claimed = n
			case core.StateAvailable:
				l.Waiting = n
			}
		}
		l.ClaimedCapped, l.WaitingCapped = l.Claimed > capN, l.Waiting > capN
		l.Claimed, l.Waiting = min(l.Claimed, capN), min(l.Waiting, capN)
		return rows.Err()
	})
}

// limitValues scans a row's limit columns (laneLimitColumns): weight is
// set exactly when a limit is.
type limitValues struct {
	conc, perProcess, rate, per, burst, weight sql.NullInt64
}

func (v *limitValues) dest() []any {
	return []any{&v.conc, &v.perProcess, &v.rate, &v.per, &v.burst, &v.weight}
}

// limit fills l's limits from v; the period is stored in microseconds.
func (v *limitValues) limit(l core.Limit) core.Limit {
	l.Concurrency, l.PerProcess, l.Rate = int(v.conc.Int64), int(v.perProcess.Int64), int(v.rate.Int64)
	l.Per = time.Duration(v.per.Int64) * time.Microsecond
	l.Burst, l.Weight = int(v.burst.Int64), int(v.weight.Int64)
	return l
}
