package core

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// Schedule is a schedule kept in the database: set, changed, paused,
// resumed and deleted while workers run (SetSchedule and the methods
// after it), its ticks enqueued by EnqueueStoredDue in any process.
type Schedule struct {
	// ScheduleSpec is the schedule's timing and item, as last set.
	ScheduleSpec
	// Paused is true while its ticks are held back (PauseSchedule).
	Paused bool
	// Watermark is the schedule's last tick passed: every tick after it
	// is still to come, and every tick at or before it was enqueued or
	// passed over (MaxCatchUp, SkipWhile, a pause, a change of timing, or
	// one before the schedule was set). BackfillSchedule enqueues the
	// ones passed over.
	Watermark time.Time
	// Next is the first tick after Watermark: the next one due, unless
	// the schedule is paused.
	Next time.Time
	// Revision counts the changes to the schedule: 1 when first set.
	Revision int64
	// CreatedAt is when the schedule was first set; UpdatedAt when it
	// was last changed or its watermark last moved, on the database
	// clock.
	CreatedAt, UpdatedAt time.Time
}

// storedDefinition is a Schedule's definition column: its spec without
// the name, as JSON.
type storedDefinition struct {
	Every       int64           `json:"every_us,omitempty"`
	Cron        string          `json:"cron,omitempty"`
	TimeZone    string          `json:"zone,omitempty"`
	MaxCatchUp  int             `json:"max_catch_up,omitempty"`
	SkipWhile   []State         `json:"skip_while,omitempty"`
	Queue       string          `json:"queue"`
	Kind        string          `json:"kind,omitempty"`
	Payload     json.RawMessage `json:"payload,omitempty"`
	Priority    int             `json:"priority,omitempty"`
	MaxAttempts int             `json:"max_attempts,omitempty"`
	FlowKey     string          `json:"flow_key,omitempty"`
	Cost        int             `json:"cost,omitempty"`
}

func encodeDefinition(sp ScheduleSpec) (string, error) {
	b, err := json.Marshal(storedDefinition{
		Every: sp.Every.Microseconds(), Cron: sp.Cron, TimeZone: sp.TimeZone, MaxCatchUp: sp.MaxCatchUp, SkipWhile: sp.SkipWhile,
		Queue: sp.Item.Queue, Kind: sp.Item.Kind, Payload: sp.Item.Payload, Priority: sp.Item.Priority,
		MaxAttempts: sp.Item.MaxAttempts, FlowKey: sp.Item.FlowKey, Cost: sp.Item.Cost,
	})
	if err != nil {
		return "", err
	}
	if len(b) > migrations.MaxScheduleDefinitionLen {
		return "", invalid("Item.Payload", "the schedule's definition is %d bytes, over %d", len(b), migrations.MaxScheduleDefinitionLen)
	}
	return string(b), nil
}

func decodeDefinition(name, text string) (ScheduleSpec, error) {
	var d storedDefinition
	if err := json.Unmarshal([]byte(text), &d); err != nil {
		return ScheduleSpec{}, fmt.Errorf("%w: schedule %q: %w", errBadDefinition, name, err)
	}
	return ScheduleSpec{
		Name: name, Every: time.Duration(d.Every) * time.Microsecond, Cron: d.Cron, TimeZone: d.TimeZone,
		MaxCatchUp: d.MaxCatchUp, SkipWhile: d.SkipWhile,
		Item: ItemSpec{Queue: d.Queue, Kind: d.Kind, Payload: d.Payload, Priority: d.Priority,
			MaxAttempts: d.MaxAttempts, FlowKey: d.FlowKey, Cost: d.Cost},
	}, nil
}

// planStored validates a spec SetSchedule is given: ScheduleSpec's rules,
// and no Run (a stored schedule outlives any run).
func (s *Store) planStored(sp ScheduleSpec) (schedulePlan, error) {
	p, err := s.planSchedule(sp, "")
	if err != nil {
		return p, err
	}
	if sp.Item.Run != uuid.Nil {
		return p, invalid("Item.Run", "a schedule kept in the database belongs to no run: leave it empty")
	}
	return p, nil
}

// SetSchedule creates the schedule sp.Name in the database, or changes
// it: its timing, its item, MaxCatchUp and SkipWhile. It takes effect at
// the next EnqueueStoredDue in every process, and a tick is always
// enqueued under one whole definition, never a mix. It reports whether
// the schedule was created.
//
// A new schedule starts with its next tick (its watermark is its latest
// tick at or before the database's now). A change of timing (Every, Cron
// or TimeZone) moves the watermark up to the new timing's latest tick at
// or before now, so that the new timing owes no tick from before the
// change; a change of anything else keeps the watermark. A paused
// schedule stays paused.
//
// sp is refused as EnqueueDue refuses it, with an *InputError naming the
// field, and so is an Item.Run or a name a code-declared schedule has
// used (its watermark is in the same table).
func (s *Store) SetSchedule(ctx context.Context, sp ScheduleSpec) (created bool, err error) {
	p, err := s.planStored(sp)
	if err != nil {
		return false, err
	}
	def, err := encodeDefinition(sp)
	if err != nil {
		return false, err
	}
	err = s.scheduleTx(ctx, "set schedule", func(tx dialect.Tx) error {
		created = false
		now, err := s.txNow(ctx, tx)
		if err != nil {
			return err
		}
		first := p.watermarkAt(now)
		res, err := tx.ExecContext(ctx, s.storedScheduleOpenSQL(), sp.Name, first, dialect.TextArg(s.d, def), s.d.Bool(false))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			created = n == 1
			return err
		}
		row, err := s.storedRow(ctx, tx, sp.Name)
		if err != nil {
			return err
		}
		watermark := row.watermark
		if row.Every != sp.Every || row.Cron != sp.Cron || row.TimeZone != sp.TimeZone {
			watermark = max(watermark, first)
		}
		res, err = tx.ExecContext(ctx, s.sql(qStoredScheduleSet), dialect.TextArg(s.d, def), watermark, sp.Name, row.revision, row.watermark)
		return changedOne(res, err, sp.Name)
	})
	return created, err
}

// watermarkAt is the watermark of a schedule set at now: its latest tick
// at or before now.
func (p *schedulePlan) watermarkAt(now time.Time) int64 {
	if t, ok := p.latest(now); ok {
		return t
	}
	return now.UnixMicro()
}

// errScheduleChanged is returned by a transaction whose compare-and-set
// found the schedule's row changed since it read it: another process
// changed it in between, and scheduleTx runs it again.
var errScheduleChanged = errors.New("plenum: schedule changed concurrently")

// scheduleChangeTries bounds the runs of a change to a schedule that
// other changes keep overtaking.
const scheduleChangeTries = 10

// scheduleTx runs fn in a transaction, again when another process
// changed the schedule between its read and its compare-and-set.
func (s *Store) scheduleTx(ctx context.Context, op string, fn func(tx dialect.Tx) error) error {
	for try := 1; ; try++ {
		err := s.inTx(ctx, op, fn)
		if !errors.Is(err, errScheduleChanged) || try == scheduleChangeTries {
			return err
		}
	}
}

// changedOne turns the result of a compare-and-set on a schedule's row
// into an error: ErrNotFound when the row is gone, errScheduleChanged
// when another change came first.
func changedOne(res sql.Result, err error, name string) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("%w (schedule %q); try again", errScheduleChanged, name)
	}
	return nil
}

// PauseSchedule holds back the ticks of the stored schedule name: once it
// returns, no process enqueues another tick of it (a tick enqueued by a
// transaction that committed first stays). Trigger and backfill still
// work. Pausing a paused schedule does nothing; an unknown name is
// ErrNotFound.
func (s *Store) PauseSchedule(ctx context.Context, name string) error {
	return s.setSchedulePaused(ctx, "pause schedule", name, true)
}

// ResumeSchedule lets the stored schedule name tick again, from its next
// tick: the ticks that fell while it was paused are passed over (its
// watermark moves up to its latest tick at or before now), and
// BackfillSchedule enqueues them if they are wanted. Resuming a schedule
// that is not paused does nothing; an unknown name is ErrNotFound.
func (s *Store) ResumeSchedule(ctx context.Context, name string) error {
	return s.setSchedulePaused(ctx, "resume schedule", name, false)
}

func (s *Store) setSchedulePaused(ctx context.Context, op, name string, paused bool) error {
	if err := lookupName("name", name, migrations.MaxScheduleLen, true); err != nil {
		return err
	}
	return s.scheduleTx(ctx, op, func(tx dialect.Tx) error {
		row, err := s.storedRow(ctx, tx, name)
		if err != nil || row.Paused == paused {
			return err
		}
		watermark := row.watermark
		if !paused {
			now, err := s.txNow(ctx, tx)
			if err != nil {
				return err
			}
			watermark = max(watermark, row.plan.watermarkAt(now))
		}
		res, err := tx.ExecContext(ctx, s.sql(qStoredSchedulePause), s.d.Bool(paused), watermark, name, row.revision, row.watermark)
		return changedOne(res, err, name)
	})
}

// DeleteSchedule deletes the stored schedule name: no tick of it is
// enqueued once it returns. Items already enqueued stay. A name set again
// later starts afresh. Deleting an unknown name does nothing; a
// code-declared schedule's watermark is never deleted.
func (s *Store) DeleteSchedule(ctx context.Context, name string) error {
	if err := lookupName("name", name, migrations.MaxScheduleLen, true); err != nil {
		return err
	}
	return s.inTx(ctx, "delete schedule", func(tx dialect.Tx) error {
		_, err := tx.ExecContext(ctx, s.sql(qStoredScheduleDelete), name)
		return err
	})
}

// Schedules returns the schedules kept in the database, in name order.
func (s *Store) Schedules(ctx context.Context) ([]Schedule, error) {
	var out []Schedule
	err := s.read(ctx, "schedules", func() error {
		out = out[:0]
		rows, err := s.db.QueryContext(ctx, s.sql(qStoredSchedules), s.d.Bool(true))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r, err := s.scanStored(rows)
			if err != nil {
				return err
			}
			out = append(out, r.Schedule)
		}
		return rows.Err()
	})
	return out, err
}

// GetSchedule returns the stored schedule name, or ErrNotFound.
func (s *Store) GetSchedule(ctx context.Context, name string) (Schedule, error) {
	if err := lookupName("name", name, migrations.MaxScheduleLen, true); err != nil {
		return Schedule{}, err
	}
	var out Schedule
	err := s.read(ctx, "schedule", func() error {
		r, err := s.storedRow(ctx, s.db, name)
		out = r.Schedule
		return err
	})
	return out, err
}

// storedSchedule is a stored schedule's row as read, with its plan.
type storedSchedule struct {
	Schedule
	watermark int64
	revision  int64
	plan      schedulePlan
}

// storedRow reads the stored schedule name: ErrNotFound when there is
// none, an *InputError when the name is a code-declared schedule's.
func (s *Store) storedRow(ctx context.Context, q dialect.Querier, name string) (storedSchedule, error) {
	r, err := s.scanStored(q.QueryRowContext(ctx, s.sql(qStoredSchedule), s.d.Bool(true), name))
	if errors.Is(err, sql.ErrNoRows) {
		return r, fmt.Errorf("%w: schedule %q", ErrNotFound, name)
	}
	if errors.Is(err, errCodeSchedule) {
		return r, invalid("Name", "%q is a schedule declared in code: give the stored one another name", name)
	}
	return r, err
}

// errBadDefinition is scanStored's error for a definition that no
// longer reads or validates (a zone this build's zone data lacks).
var errBadDefinition = errors.New("plenum: stored schedule's definition refused")

// errCodeSchedule is scanStored's error for a code-declared schedule's
// row.
var errCodeSchedule = errors.New("code-declared schedule")

func (s *Store) scanStored(row interface{ Scan(...any) error }) (storedSchedule, error) {
	var (
		r                storedSchedule
		name             string
		def              sql.NullString
		paused           int
		revision         sql.NullInt64
		created, updated = timeValue{d: s.d}, timeValue{d: s.d}
	)
	if err := row.Scan(&name, &r.watermark, &def, &paused, &revision, &created, &updated); err != nil {
		return r, err
	}
	if !revision.Valid || !def.Valid {
		return r, errCodeSchedule
	}
	spec, err := decodeDefinition(name, def.String)
	if err != nil {
		return r, err
	}
	r.plan, err = s.planSchedule(spec, "")
	if err != nil {
		return r, fmt.Errorf("%w: schedule %q: %w", errBadDefinition, name, err)
	}
	r.revision = revision.Int64
	r.Schedule = Schedule{
		ScheduleSpec: spec, Paused: paused == 1, Watermark: time.UnixMicro(r.watermark).UTC(),
		Next: r.plan.next(r.watermark), Revision: r.revision, CreatedAt: created.t, UpdatedAt: updated.t,
	}
	return r, nil
}

// next returns the first tick after watermark.
func (p *schedulePlan) next(watermark int64) time.Time {
	if p.every > 0 {
		return time.UnixMicro((floorDiv(watermark, p.every) + 1) * p.every).UTC()
	}
	return p.cron.Next(time.UnixMicro(watermark))
}
