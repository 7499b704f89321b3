package core

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// EnqueueStoredDue enqueues the due ticks of every schedule kept in the
// database that is not paused, as EnqueueDue does for the schedules given
// in code: the ticks after the schedule's watermark and at or before the
// database clock, at most MaxCatchUp of them, in a transaction of the
// schedule's own whose compare-and-set of the watermark compares the
// schedule's revision too. So however many processes call it at once,
// each tick is enqueued once, under the definition of one revision, and
// none after PauseSchedule or DeleteSchedule has returned. Each item's
// key is TickKey(name, tick).
//
// It reads every stored schedule once, and opens a transaction only for
// those with a tick due. On an error it goes on with the other schedules
// and returns the ticks enqueued with the first error.
func (s *Store) EnqueueStoredDue(ctx context.Context) ([]Tick, error) {
	var now time.Time
	err := s.read(ctx, "enqueue stored due", func() error {
		v := timeValue{d: s.d}
		err := s.db.QueryRowContext(ctx, s.sql(s.nowSQL())).Scan(&v)
		now = v.t
		return err
	})
	if err != nil {
		return nil, err
	}
	all, err := s.storedRows(ctx)
	if err != nil {
		return nil, err
	}
	var out []Tick
	var first error
	for _, r := range all {
		if r.Paused || len(r.plan.due(r.watermark, now, 1)) == 0 {
			continue
		}
		ticks, err := s.enqueueStored(ctx, r.Name)
		out = append(out, ticks...)
		if err != nil && first == nil {
			first = fmt.Errorf("%w (schedule %q)", err, r.Name)
		}
	}
	return out, first
}

// storedRows reads every stored schedule, a definition no longer valid
// included (its error is returned at the end, the others kept).
func (s *Store) storedRows(ctx context.Context) ([]storedSchedule, error) {
	var out []storedSchedule
	var bad error
	err := s.read(ctx, "schedules", func() error {
		out, bad = out[:0], nil
		rows, err := s.db.QueryContext(ctx, s.sql(qStoredSchedules), s.d.Bool(true))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r, err := s.scanStored(rows)
			if errors.Is(err, errBadDefinition) {
				bad = cmp.Or(bad, err)
				continue
			}
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, bad
}

// enqueueStored runs one stored schedule's transaction: it reads the
// schedule again, so that its ticks follow the definition of the revision
// whose watermark it moves.
func (s *Store) enqueueStored(ctx context.Context, name string) ([]Tick, error) {
	var out []Tick
	err := s.inTx(ctx, "enqueue stored due", func(tx dialect.Tx) error {
		out = nil
		now, err := s.txNow(ctx, tx)
		if err != nil {
			return err
		}
		r, err := s.storedRow(ctx, tx, name)
		if errors.Is(err, ErrNotFound) {
			return nil // deleted since the list was read
		}
		if err != nil || r.Paused {
			return err
		}
		out, err = s.enqueueTicks(ctx, tx, &r.plan, r.watermark, now, func(last int64) (sql.Result, error) {
			return tx.ExecContext(ctx, s.sql(qStoredScheduleAdvance), last, name, r.watermark, r.revision)
		})
		return err
	})
	return out, err
}

// triggerKeyPrefix begins the key of an item TriggerSchedule enqueues.
const triggerKeyPrefix = "plenum.trigger/"

// TriggerKey returns the idempotency key of the item TriggerSchedule
// enqueued for schedule at at: "plenum.trigger/", the name, a slash and
// the time in UTC with microseconds. ParseTickKey reads it back too.
func TriggerKey(schedule string, at time.Time) string {
	return triggerKeyPrefix + schedule + "/" + at.UTC().Format(tickTimeFormat)
}

// TriggerSchedule enqueues the item of the stored schedule name now, off
// its timing: its key is TriggerKey(name, now on the database clock). Its
// watermark does not move, so that its ticks come as before; a paused
// schedule may be triggered. An unknown name is ErrNotFound.
func (s *Store) TriggerSchedule(ctx context.Context, name string) (Tick, error) {
	if err := lookupName("name", name, migrations.MaxScheduleLen, true); err != nil {
		return Tick{}, err
	}
	var out Tick
	err := s.inTx(ctx, "trigger schedule", func(tx dialect.Tx) error {
		r, err := s.storedRow(ctx, tx, name)
		if err != nil {
			return err
		}
		now, err := s.txNow(ctx, tx)
		if err != nil {
			return err
		}
		spec := r.plan.spec.Item
		spec.Key = TriggerKey(name, now)
		enq, err := s.insertItems(ctx, tx, []ItemSpec{spec}, uuid.Nil, "")
		if err != nil {
			return err
		}
		out = Tick{Schedule: name, Queue: spec.Queue, At: now.UTC().Truncate(time.Microsecond), ID: enq[0].ID, Existed: enq[0].Existed}
		return nil
	})
	return out, err
}

// MaxBackfillTicks bounds the ticks one BackfillSchedule enqueues.
const MaxBackfillTicks = 10000

// backfillChunk is the number of ticks one transaction of a backfill
// enqueues.
const backfillChunk = 100

// Backfill is what BackfillSchedule did.
type Backfill struct {
	// Enqueued are the ticks whose items it enqueued.
	Enqueued []Tick
	// Existed counts the ticks whose item was already in the queue: a
	// tick enqueued before, by the schedule or an earlier backfill.
	Existed int
	// Through is the last time the backfill covered: the end of the
	// range, or the schedule's watermark when the range went past it.
	Through time.Time
}

// BackfillSchedule enqueues the ticks of the stored schedule name from
// from to to (both included) that are not already in the queue: the ticks
// its watermark passed over (while paused, before it was set, beyond
// MaxCatchUp, skipped by SkipWhile) or whose items failed to arrive. Only
// ticks at or before the watermark are backfilled, the later ones being
// the schedule's own to enqueue, so that no tick is enqueued both ways;
// and each has its tick's key, so that a tick whose item is still in the
// queue is not enqueued again, however many backfills run at once.
//
// The database remembers a tick by its item: a tick whose item retention
// (Purge) has deleted is enqueued again by a backfill that covers it.
// Backfill ranges younger than the retention of finished items.
//
// The range holds at most MaxBackfillTicks ticks; they are enqueued in
// transactions of a hundred, oldest first, so that a backfill cut short
// by an error is completed by running it again. Paused schedules may be
// backfilled. An unknown name is ErrNotFound.
func (s *Store) BackfillSchedule(ctx context.Context, name string, from, to time.Time) (Backfill, error) {
	if err := lookupName("name", name, migrations.MaxScheduleLen, true); err != nil {
		return Backfill{}, err
	}
	if from.IsZero() || to.Before(from) {
		return Backfill{}, invalid("from", "the range %v to %v is empty", from, to)
	}
	var r storedSchedule
	err := s.read(ctx, "backfill schedule", func() error {
		var err error
		r, err = s.storedRow(ctx, s.db, name)
		return err
	})
	if err != nil {
		return Backfill{}, err
	}
	// The watermark only grows: a tick at or before the value read is
	// never the schedule's own to enqueue later.
	through := to
	if wm := time.UnixMicro(r.watermark); wm.Before(through) {
		through = wm
	}
	out := Backfill{Through: through.UTC()}
	ticks, err := r.plan.between(from, through)
	if err != nil {
		return out, err
	}
	for len(ticks) > 0 {
		chunk := ticks[:min(len(ticks), backfillChunk)]
		ticks = ticks[len(chunk):]
		specs := make([]ItemSpec, len(chunk))
		for i, at := range chunk {
			specs[i] = r.plan.spec.Item
			specs[i].Key = TickKey(name, time.UnixMicro(at))
		}
		var enq []EnqueueResult
		err := s.inTx(ctx, "backfill schedule", func(tx dialect.Tx) error {
			var err error
			enq, err = s.insertItems(ctx, tx, specs, uuid.Nil, "")
			return err
		})
		if err != nil {
			return out, err
		}
		for i, e := range enq {
			if e.Existed {
				out.Existed++
				continue
			}
			out.Enqueued = append(out.Enqueued, Tick{Schedule: name, Queue: r.plan.spec.Item.Queue, At: time.UnixMicro(chunk[i]).UTC(), ID: e.ID})
		}
	}
	return out, nil
}

// between returns p's ticks from from to to, both included, in Unix
// microseconds, oldest first: an *InputError when there are more than
// MaxBackfillTicks.
func (p *schedulePlan) between(from, to time.Time) ([]int64, error) {
	lo, hi := from.UnixMicro(), to.UnixMicro()
	var out []int64
	if p.every > 0 {
		first, last := floorDiv(lo-1, p.every)+1, floorDiv(hi, p.every)
		if last-first+1 > MaxBackfillTicks {
			return nil, invalid("to", "the range holds %d ticks, over %d", last-first+1, MaxBackfillTicks)
		}
		for n := first; n <= last; n++ {
			out = append(out, n*p.every)
		}
		return out, nil
	}
	for t := p.cron.Next(time.UnixMicro(lo - 1)); !t.IsZero() && t.UnixMicro() <= hi; t = p.cron.Next(t) {
		if len(out) == MaxBackfillTicks {
			return nil, invalid("to", "the range holds over %d ticks", MaxBackfillTicks)
		}
		out = append(out, t.UnixMicro())
	}
	return out, nil
}
