package core

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
	"github.com/plenumdb/plenum/migrations"
)

// Limit is the flow control of a queue's items that carry a flow key
// (ItemSpec.FlowKey): the items of one key of one queue form a lane,
// and lanes take turns at every claim of their queue, in every process.
// A Limit with Key set is that key's own, and replaces the queue's
// default (the Limit with Key "") for the key as a whole: fields it
// leaves zero mean no limit, not the default's. A key with neither
// follows no limit and still takes its turn.
//
// Limits live in the database: SetLimit and DeleteLimit change them
// while workers run, and the next claim of the queue in any process
// applies them. Items without a flow key are never limited.
type Limit struct {
	// Queue is the queue the limit applies to; required.
	Queue string
	// Key is the flow key the limit applies to, or "" for the default
	// of the queue's keys.
	Key string
	// Concurrency is the most items of one key claimed at once, across
	// every process sharing the tables; 0 for no limit. A claim counts
	// the key's claimed items under the lock of the key's lane, in its
	// own transaction, so that no interleaving of claims exceeds it; an
	// item stops counting in the transaction that ends its claim,
	// whatever ends it (completion, failure, release, cancel, the
	// reaper), since what is counted is the items' own state.
	Concurrency int
	// PerProcess is the most items of one key one owner (a worker
	// process) holds at once; 0 for no limit.
	PerProcess int
	// Rate, with Per, is the most claims of one key per period: on
	// average Rate per Per, counted on the database clock, with at most
	// Burst of them at once after a quiet spell, so that any window of
	// length Per holds at most Rate + Burst claims. An item's Cost is the
	// claims it counts for. 0 for no rate limit.
	Rate int
	// Per is the rate's period, from a millisecond to a day; required
	// with Rate.
	Per time.Duration
	// Burst is how many claims of the rate may be taken at once; 0
	// means 1, which spaces claims evenly (Per / Rate apart). An item
	// whose Cost exceeds Burst waits until the key has been quiet for
	// Cost claims' time.
	Burst int
	// Weight is the key's share of a claim against the other keys of the
	// queue that have items: a claim of n items gives each key a part of
	// them proportional to its weight. 0 means 1; at most MaxWeight.
	Weight int
}

// Bounds of a Limit's fields.
const (
	// MaxLimitValue bounds Concurrency, PerProcess, Rate and Burst.
	MaxLimitValue = 1 << 20
	// MaxWeight bounds Limit.Weight.
	MaxWeight = 1000
	// MinRatePer and MaxRatePer bound Limit.Per.
	MinRatePer = time.Millisecond
	MaxRatePer = 24 * time.Hour
	// MaxCost bounds ItemSpec.Cost.
	MaxCost = 1 << 20
)

// String says what l allows, in the words of its fields: "concurrency
// 5, per process 2, rate 10/1s burst 2, weight 3", or "no limit" (with
// the weight, when above 1). Queue and Key are left out.
func (l Limit) String() string {
	var parts []string
	if l.Concurrency > 0 {
		parts = append(parts, "concurrency "+strconv.Itoa(l.Concurrency))
	}
	if l.PerProcess > 0 {
		parts = append(parts, "per process "+strconv.Itoa(l.PerProcess))
	}
	if l.Rate > 0 {
		r := "rate " + strconv.Itoa(l.Rate) + "/" + l.Per.String()
		if l.Burst > 1 {
			r += " burst " + strconv.Itoa(l.Burst)
		}
		parts = append(parts, r)
	}
	if len(parts) == 0 {
		parts = append(parts, "no limit")
	}
	if l.Weight > 1 {
		parts = append(parts, "weight "+strconv.Itoa(l.Weight))
	}
	return strings.Join(parts, ", ")
}

// weight is l's weight, 1 when unset.
func (l Limit) weight() int { return max(1, l.Weight) }

// bounds reports whether l limits claims (a concurrency, per-process or
// rate limit), beyond a weight.
func (l Limit) bounds() bool { return l.Concurrency > 0 || l.PerProcess > 0 || l.Rate > 0 }

// burst is l's burst, 1 when unset.
func (l Limit) burst() int { return max(1, l.Burst) }

// validate refuses a limit the store cannot hold.
func (l Limit) validate() error {
	if err := validName("Queue", l.Queue, migrations.MaxQueueLen, true); err != nil {
		return err
	}
	if err := validName("Key", l.Key, migrations.MaxFlowKeyLen, false); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"Concurrency", l.Concurrency}, {"PerProcess", l.PerProcess}, {"Rate", l.Rate}, {"Burst", l.Burst}} {
		if f.v < 0 || f.v > MaxLimitValue {
			return invalid(f.name, "%d is outside [0, %d]", f.v, MaxLimitValue)
		}
	}
	if l.Weight < 0 || l.Weight > MaxWeight {
		return invalid("Weight", "%d is outside [0, %d] (0 for 1)", l.Weight, MaxWeight)
	}
	switch {
	case l.Rate > 0 && (l.Per < MinRatePer || l.Per > MaxRatePer):
		return invalid("Per", "%v is outside [%v, %v], required with Rate", l.Per, MinRatePer, MaxRatePer)
	case l.Rate == 0 && (l.Per != 0 || l.Burst != 0):
		return invalid("Rate", "is 0, but Per or Burst is set: set Rate with them")
	}
	return nil
}

// SetLimit stores l: the queue's default when l.Key is "", else the
// key's own. It takes effect at the next claim of the queue in every
// process; items already claimed are not touched, so that a lowered
// concurrency limit is reached as the claims over it end.
func (s *Store) SetLimit(ctx context.Context, l Limit) error {
	if err := l.validate(); err != nil {
		return err
	}
	args := []any{l.Concurrency, l.PerProcess, l.Rate, micros(l.Per), l.Burst, l.weight()}
	return s.inTx(ctx, "set limit", func(tx dialect.Tx) error {
		if l.Key == "" {
			if _, err := tx.ExecContext(ctx, s.queueOpenSQL(), l.Queue, s.d.Bool(false)); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, s.sql(qQueueSetLimit), append(args, l.Queue)...)
			return err
		}
		// The key's lane, opened where it has none (or retention has
		// just deleted it: moveLanes).
		return s.moveLanes(ctx, tx, l.Queue, []string{l.Key}, func() (sql.Result, error) {
			return tx.ExecContext(ctx, s.sql(qLaneSetLimit), append(args, l.Queue, l.Key)...)
		})
	})
}

// DeleteLimit removes the limit of key in queue (the queue's default
// when key is ""): the key follows the queue's default again, or no
// limit. Deleting a limit that does not exist does nothing.
func (s *Store) DeleteLimit(ctx context.Context, queue, key string) error {
	if err := lookupName("queue", queue, migrations.MaxQueueLen, true); err != nil {
		return err
	}
	if err := lookupName("key", key, migrations.MaxFlowKeyLen, false); err != nil {
		return err
	}
	return s.inTx(ctx, "delete limit", func(tx dialect.Tx) error {
		if key == "" {
			_, err := tx.ExecContext(ctx, s.sql(qQueueClearLimit), queue)
			return err
		}
		_, err := tx.ExecContext(ctx, s.sql(qLaneClearLimit), queue, key)
		return err
	})
}

// Limits returns the limits set on queue: its default first, when set,
// then the keys' own in key order.
func (s *Store) Limits(ctx context.Context, queue string) ([]Limit, error) {
	if err := lookupName("queue", queue, migrations.MaxQueueLen, true); err != nil {
		return nil, err
	}
	var out []Limit
	err := s.read(ctx, "limits", func() error {
		out = out[:0]
		def, ok, err := s.queueLimit(ctx, s.db, queue)
		if err != nil {
			return err
		}
		if ok {
			out = append(out, def)
		}
		rows, err := s.db.QueryContext(ctx, s.sql(qLaneLimits), queue)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			l := Limit{Queue: queue}
			var v limitValues
			if err := rows.Scan(append([]any{&l.Key}, v.dest()...)...); err != nil {
				return err
			}
			out = append(out, v.limit(l))
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// queueLimit reads the default limit of queue, and whether one is set.
func (s *Store) queueLimit(ctx context.Context, q dialect.Querier, queue string) (Limit, bool, error) {
	var v limitValues
	err := q.QueryRowContext(ctx, s.sql(qQueueLimit), queue).Scan(v.dest()...)
	if sqlkit.IsNoRows(err) {
		return Limit{Queue: queue}, false, nil
	}
	if err != nil {
		return Limit{}, false, err
	}
	return v.limit(Limit{Queue: queue}), v.weight.Valid, nil
}

// limitValues scans a row's limit columns (limitColumns): weight is set
// exactly when a limit is.
type limitValues struct {
	conc, perProcess, rate, burst, weight sql.NullInt64
	per                                   sql.NullInt64
}

func (v *limitValues) dest() []any {
	return []any{&v.conc, &v.perProcess, &v.rate, &v.per, &v.burst, &v.weight}
}

// limit fills l's limits from v.
func (v *limitValues) limit(l Limit) Limit {
	l.Concurrency, l.PerProcess, l.Rate = int(v.conc.Int64), int(v.perProcess.Int64), int(v.rate.Int64)
	l.Per = time.Duration(v.per.Int64) * time.Microsecond
	l.Burst, l.Weight = int(v.burst.Int64), int(v.weight.Int64)
	return l
}

// cellTime is the time one claim of l's rate takes, in microseconds (the
// emission interval of the generic cell rate algorithm), rounded up.
func (l Limit) cellTime() int64 {
	per := l.Per.Microseconds()
	return (per + int64(l.Rate) - 1) / int64(l.Rate)
}

// rateAllows returns how many claims l's rate allows at now, given the
// lane's theoretical arrival time tat (micros on the database clock; 0
// for a lane never rate-limited): the claims that fit in the burst's
// tolerance. It is at least 0, and at most Burst.
func (l Limit) rateAllows(now, tat int64) int {
	t := l.cellTime()
	eff := max(tat, now)
	n := (int64(l.burst())*t - (eff - now)) / t
	return int(min(max(n, 0), math.MaxInt32))
}

// NextClaimAt returns when a lane of queue that has work but may not give
// it now (its rate spent, or its items not yet due) may next give it, on
// the database clock, or the zero time when none waits so. A runtime
// whose claim came back short waits no longer than until then, rather
// than polling a rate-limited key faster than its limit allows; it asks
// with NextClaimSince, so as not to miss a turn that came while it asked.
func (s *Store) NextClaimAt(ctx context.Context, queue string) (time.Time, error) {
	return s.NextClaimSince(ctx, queue, 0)
}

// NextClaimSince is NextClaimAt counting also the turns that came within
// the last since, which it may then return, in the past. A runtime passes
// the time since it sent the claim that came back short: a turn that came
// between that claim and this read (on a loaded host, a lane's turn a few
// milliseconds after the claim looked may have passed before this read
// runs) is then its next claim's, at once, not left to its poll interval.
// Since counts from that claim, so the next claim's question no longer
// counts a turn the claim came after: a runtime does not claim in a loop
// for one turn. A negative since is an *InputError.
func (s *Store) NextClaimSince(ctx context.Context, queue string, since time.Duration) (time.Time, error) {
	if err := lookupName("queue", queue, migrations.MaxQueueLen, true); err != nil {
		return time.Time{}, err
	}
	if since < 0 {
		return time.Time{}, &InputError{Field: "since", Reason: fmt.Sprintf("%v: a time since is not negative", since)}
	}
	var at time.Time
	err := s.read(ctx, "next claim", func() error {
		v := timeValue{d: s.d}
		if err := s.db.QueryRowContext(ctx, s.sql(qLanesNext), queue, -micros(since)).Scan(&v); err != nil {
			return err
		}
		at = v.t
		return nil
	})
	return at, err
}
