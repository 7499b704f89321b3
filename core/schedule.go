package core

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/cron"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// ScheduleSpec is periodic work: an item enqueued at every tick of an
// interval or a cron expression, counted on the database clock.
type ScheduleSpec struct {
	// Name identifies the schedule across every process sharing the tables:
	// its watermark is kept under this name. Required, 1 to
	// migrations.MaxScheduleLen characters, under ItemSpec.Queue's rules for
	// names. Two processes running the same name must give it the same timing
	// and item.
	Name string

	// Every is the interval between ticks: at least one second. Ticks fall
	// on whole multiples of it since the Unix epoch, in UTC (Every: time.Hour
	// ticks on the hour). Exactly one of Every and Cron is set.
	Every time.Duration
	// Cron is a five-field cron expression (see package cron), read on
	// the wall clock of TimeZone.
	Cron string
	// TimeZone is the IANA time zone Cron is read in ("Europe/Paris");
	// "" or "UTC" for UTC. Only with Cron. The zone data is embedded in
	// the program (cron.LoadZone), so that every process reads it alike.
	// At a daylight-saving change a skipped wall time ticks at the end of
	// the gap and a repeated one ticks once, at its first pass (see
	// cron.Expr.In).
	TimeZone string

	// Item is the item each tick enqueues. Queue is required; Key and
	// Delay must be empty: each tick's item gets the key TickKey(Name, at)
	// and is available at once.
	Item ItemSpec

	// MaxCatchUp bounds how many ticks one call enqueues when several are
	// due (after downtime, or a call later than its interval): the latest
	// ones, the older ones skipped for good. 0 or 1 is "latest only".
	// At most MaxCatchUpCeiling.
	MaxCatchUp int

	// SkipWhile, when not empty, skips the schedule's ticks while the item
	// of its latest enqueued tick (the one at the watermark, found by its
	// TickKey in Item.Queue) is in one of these states: with
	// {StateAvailable, StateClaimed}, a tick never overlaps the previous
	// one. While that item is in them, EnqueueDue enqueues nothing and the
	// watermark stays on its tick. Once it is in another state, the ticks
	// at or before its finished_at are skipped for good (the watermark
	// passes them) and the later ones are due as usual, MaxCatchUp
	// bounding them; an item that left the states without finishing (one
	// released back to available, when only StateClaimed is listed) skips
	// none. If retention (Purge) deleted the item first, or there is none
	// (the schedule's first tick), nothing is skipped. This is uniqueness
	// by state for schedules: a tick's own key stays TickKey, and
	// Item.KeyStates and Item.KeyPeriod are refused.
	SkipWhile []State
}

// MaxCatchUpCeiling bounds ScheduleSpec.MaxCatchUp.
const MaxCatchUpCeiling = 1000

// minEvery is the shortest interval of a schedule: far above every
// dialect's clock resolution.
const minEvery = time.Second

// Tick is one item EnqueueDue enqueued.
type Tick struct {
	// Schedule is the schedule's name.
	Schedule string
	// Queue is the queue the tick's item went to (its schedule's
	// Item.Queue).
	Queue string
	// At is the tick's time, in UTC.
	At time.Time
	// ID is the item's id.
	ID uuid.UUID
	// Existed is true when an item with the tick's key was already in the
	// queue (an item the caller enqueued by hand with that key); none of
	// the schedule's own ticks is ever enqueued twice.
	Existed bool
}

// tickKeyPrefix begins the key of every tick's item.
const tickKeyPrefix = "plenum.tick/"

// tickTimeFormat is fixed-width, so that a tick's key is the same text
// whichever process makes it.
const tickTimeFormat = "2006-01-02T15:04:05.000000Z"

// TickKey returns the idempotency key of the item enqueued for schedule's
// tick at: "plenum.tick/", the name, a slash and the time in UTC with
// microseconds. A handler reads the tick back with ParseTickKey.
func TickKey(schedule string, at time.Time) string {
	return tickKeyPrefix + schedule + "/" + at.UTC().Format(tickTimeFormat)
}

// ParseTickKey returns the schedule and tick time of an item's key made by
// TickKey (or by TriggerKey: the time it was triggered), and false for any
// other key.
func ParseTickKey(key string) (schedule string, at time.Time, ok bool) {
	rest, found := strings.CutPrefix(key, tickKeyPrefix)
	if !found {
		rest, found = strings.CutPrefix(key, triggerKeyPrefix)
	}
	i := strings.LastIndexByte(rest, '/')
	if !found || i <= 0 {
		return "", time.Time{}, false
	}
	at, err := time.Parse(tickTimeFormat, rest[i+1:])
	if err != nil {
		return "", time.Time{}, false
	}
	return rest[:i], at, true
}

// EnqueueDue enqueues the due ticks of every schedule: those after the
// schedule's watermark (the last tick enqueued) and at or before the
// database clock, at most MaxCatchUp of them, the latest. Each schedule
// runs in its own transaction: the watermark is moved by a compare-and-set
// on the value read, and the ticks' items are inserted in the same
// transaction, so that however many processes call EnqueueDue at once,
// each tick is enqueued once, and a transaction retried after an error
// either did both or neither. Each item's key is TickKey(name, tick).
//
// A schedule seen for the first time records the latest tick at or before
// now as its watermark and enqueues nothing: it starts with the next tick.
// The watermark, not the items, remembers what was enqueued, so that
// retention (Purge) deleting a tick's finished item never makes it due
// again. Missed ticks are found in closed form: arithmetic for an
// interval, and for a cron expression a step back per tick kept, never a
// step per tick missed.
//
// Call it every second or so (the worker does, Config.Periodic): a tick is
// enqueued at the first call after its time. On an error, the ticks of the
// schedules before the one that failed are returned with it (they are
// committed); the schedules after it were not asked.
func (s *Store) EnqueueDue(ctx context.Context, specs ...ScheduleSpec) ([]Tick, error) {
	plans, err := s.planSchedules(specs)
	if err != nil {
		return nil, err
	}
	var out []Tick
	for i := range plans {
		ticks, err := s.enqueueDue(ctx, &plans[i])
		if err != nil {
			return out, fmt.Errorf("%w (schedule %q)", err, plans[i].spec.Name)
		}
		out = append(out, ticks...)
	}
	return out, nil
}

// CheckSchedules refuses, without touching the database, the specs that
// EnqueueDue would refuse: an *InputError naming the field (for a Cron
// the parser refused, errors.As finds the *cron.Error too). Run it where schedules are configured, to fail at start rather
// than at the first tick.
func (s *Store) CheckSchedules(specs ...ScheduleSpec) error {
	_, err := s.planSchedules(specs)
	return err
}

// schedulePlan is a validated spec with its timing parsed.
type schedulePlan struct {
	spec  ScheduleSpec
	every int64 // microseconds, or 0 for cron
	cron  *cron.Expr
}

func (s *Store) planSchedules(specs []ScheduleSpec) ([]schedulePlan, error) {
	if len(specs) == 0 {
		return nil, invalid("specs", "no schedule given")
	}
	plans := make([]schedulePlan, len(specs))
	seen := make(map[string]bool, len(specs))
	for i, sp := range specs {
		at := fmt.Sprintf("specs[%d].", i)
		p, err := s.planSchedule(sp, at)
		if err != nil {
			return nil, err
		}
		if seen[sp.Name] {
			return nil, invalid(at+"Name", "%q is given twice", sp.Name)
		}
		seen[sp.Name] = true
		plans[i] = p
	}
	return plans, nil
}

// planSchedule validates one spec, naming its fields after at, and parses
// its timing.
func (s *Store) planSchedule(sp ScheduleSpec, at string) (schedulePlan, error) {
	if err := validName(at+"Name", sp.Name, migrations.MaxScheduleLen, true); err != nil {
		return schedulePlan{}, err
	}
	p := schedulePlan{spec: sp}
	switch {
	case sp.Every != 0 && sp.Cron != "":
		return p, invalid(at+"Every", "both Every and Cron are set: give one")
	case sp.Cron != "":
		c, err := cron.Parse(sp.Cron)
		if err != nil {
			return p, cronInvalid(at+"Cron", err)
		}
		loc, err := cron.LoadZone(sp.TimeZone)
		if err != nil {
			return p, &InputError{Field: at + "TimeZone", Reason: err.Error(), Err: err}
		}
		p.cron = c.In(loc)
	case sp.Every < minEvery || sp.Every > MaxDelay:
		return p, invalid(at+"Every", "%v is outside [%v, %v] (or set Cron instead)", sp.Every, minEvery, MaxDelay)
	default:
		p.every = sp.Every.Microseconds()
	}
	if sp.TimeZone != "" && sp.Cron == "" {
		return p, invalid(at+"TimeZone", "is set without Cron: an interval counts from the Unix epoch")
	}
	if sp.MaxCatchUp < 0 || sp.MaxCatchUp > MaxCatchUpCeiling {
		return p, invalid(at+"MaxCatchUp", "%d is outside [0, %d]", sp.MaxCatchUp, MaxCatchUpCeiling)
	}
	if sp.Item.Key != "" {
		return p, invalid(at+"Item.Key", "is set per tick (TickKey): leave it empty")
	}
	if sp.Item.KeyStates != nil || sp.Item.KeyPeriod != 0 {
		field := at + "Item.KeyStates"
		if sp.Item.KeyPeriod != 0 {
			field = at + "Item.KeyPeriod"
		}
		return p, invalid(field, "a tick's key is its own (TickKey): leave it empty, and use SkipWhile")
	}
	for _, st := range sp.SkipWhile {
		if !knownState(st) {
			return p, invalid(at+"SkipWhile", "%q is not an item state", st)
		}
	}
	if sp.Item.Delay != 0 {
		return p, invalid(at+"Item.Delay", "a tick's item is available at its tick: leave it zero")
	}
	if err := s.validateSpec(&p.spec.Item, at+"Item."); err != nil {
		return p, err
	}
	return p, nil
}

// latest returns the last tick at or before now, in Unix microseconds, or
// false if there is none.
func (p *schedulePlan) latest(now time.Time) (int64, bool) {
	if p.every > 0 {
		return floorDiv(now.UnixMicro(), p.every) * p.every, true
	}
	t := p.cron.Prev(now)
	return t.UnixMicro(), !t.IsZero()
}

// due returns the ticks after watermark and at or before now, oldest
// first, at most keep of them: the latest.
func (p *schedulePlan) due(watermark int64, now time.Time, keep int) []int64 {
	if p.every > 0 {
		last := floorDiv(now.UnixMicro(), p.every)
		first := floorDiv(watermark, p.every) + 1
		if last < first {
			return nil
		}
		n := min(last-first+1, int64(keep))
		ticks := make([]int64, n)
		for i := range ticks {
			ticks[i] = (last - n + 1 + int64(i)) * p.every
		}
		return ticks
	}
	var ticks []int64
	for t := p.cron.Prev(now); !t.IsZero() && t.UnixMicro() > watermark && len(ticks) < keep; t = p.cron.Prev(t.Add(-time.Minute)) {
		ticks = append(ticks, t.UnixMicro())
	}
	for i, j := 0, len(ticks)-1; i < j; i, j = i+1, j-1 {
		ticks[i], ticks[j] = ticks[j], ticks[i]
	}
	return ticks
}

// floorDiv is a / b rounded towards minus infinity (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// enqueueDue runs one schedule's transaction.
func (s *Store) enqueueDue(ctx context.Context, p *schedulePlan) ([]Tick, error) {
	var out []Tick
	err := s.inTx(ctx, "enqueue due", func(tx dialect.Tx) error {
		out = nil
		now, err := s.txNow(ctx, tx)
		if err != nil {
			return err
		}
		var watermark int64
		var revision sql.NullInt64
		err = tx.QueryRowContext(ctx, s.sql(qScheduleRead), p.spec.Name).Scan(&watermark, &revision)
		if errors.Is(err, sql.ErrNoRows) {
			first, ok := p.latest(now)
			if !ok {
				return nil
			}
			_, err := tx.ExecContext(ctx, s.scheduleOpenSQL(), p.spec.Name, first)
			return err
		}
		if err != nil {
			return err
		}
		if revision.Valid {
			return invalid("Name", "%q is a schedule kept in the database (SetSchedule): give the code's schedule another name", p.spec.Name)
		}
		out, err = s.enqueueTicks(ctx, tx, p, watermark, now, func(last int64) (sql.Result, error) {
			return tx.ExecContext(ctx, s.sql(qScheduleAdvance), last, p.spec.Name, watermark)
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// txNow reads the database clock in tx.
func (s *Store) txNow(ctx context.Context, tx dialect.Tx) (time.Time, error) {
	now := timeValue{d: s.d}
	err := tx.QueryRowContext(ctx, s.sql(s.nowSQL())).Scan(&now)
	return now.t, err
}

// enqueueTicks enqueues, in tx, p's ticks due after watermark at now, at
// most MaxCatchUp of them, once advance, the compare-and-set of the
// watermark to the last of them, has moved exactly one row: a process
// that lost the race to move it enqueues nothing.
func (s *Store) enqueueTicks(ctx context.Context, tx dialect.Tx, p *schedulePlan, watermark int64, now time.Time, advance func(last int64) (sql.Result, error)) ([]Tick, error) {
	ticks := p.due(watermark, now, max(p.spec.MaxCatchUp, 1))
	if len(ticks) == 0 {
		return nil, nil
	}
	last := ticks[len(ticks)-1]
	ticks, held, err := s.skipTicks(ctx, tx, p, watermark, ticks)
	if err != nil || held {
		return nil, err
	}
	res, err := advance(last)
	if err != nil {
		return nil, err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return nil, err // another process moved it first and enqueued these
	}
	if len(ticks) == 0 {
		return nil, nil // all skipped (SkipWhile)
	}
	specs := make([]ItemSpec, len(ticks))
	for i, at := range ticks {
		specs[i] = p.spec.Item
		specs[i].Key = TickKey(p.spec.Name, time.UnixMicro(at))
	}
	// The ticks share one Run: checking the first checks them all.
	if err := s.runsExist(ctx, tx, specs[:1], func(int) string { return "schedule " + strconv.Quote(p.spec.Name) + " Item.Run" }); err != nil {
		return nil, err
	}
	enq, err := s.insertItems(ctx, tx, specs, uuid.Nil, "")
	if err != nil {
		return nil, err
	}
	out := make([]Tick, len(enq))
	for i, e := range enq {
		out[i] = Tick{Schedule: p.spec.Name, Queue: p.spec.Item.Queue, At: time.UnixMicro(ticks[i]).UTC(), ID: e.ID, Existed: e.Existed}
	}
	return out, nil
}

// cronInvalid is the InputError for a Cron the parser refused: it names the
// spec's field and keeps the parser's error for errors.As.
func cronInvalid(field string, err error) error {
	var ce *cron.Error
	if !errors.As(err, &ce) {
		return &InputError{Field: field, Reason: err.Error(), Err: err}
	}
	reason := fmt.Sprintf("%q: %s", ce.Expr, ce.Reason)
	if ce.Field != "" {
		reason = fmt.Sprintf("%q: %s field: %s", ce.Expr, ce.Field, ce.Reason)
	}
	return &InputError{Field: field, Reason: reason, Err: err}
}

// skipTicks applies p's SkipWhile to the due ticks: held when the item of
// the tick at watermark is in one of its states (nothing is due, and the
// watermark stays), else the ticks after that item finished.
func (s *Store) skipTicks(ctx context.Context, tx dialect.Tx, p *schedulePlan, watermark int64, ticks []int64) ([]int64, bool, error) {
	if len(p.spec.SkipWhile) == 0 {
		return ticks, false, nil
	}
	var state string
	finished := timeValue{d: s.d}
	err := tx.QueryRowContext(ctx, s.sql(qTickHolder), p.spec.Item.Queue, TickKey(p.spec.Name, time.UnixMicro(watermark))).Scan(&state, &finished)
	if errors.Is(err, sql.ErrNoRows) {
		return ticks, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if slices.Contains(p.spec.SkipWhile, State(state)) {
		return nil, true, nil
	}
	if finished.t.IsZero() {
		return ticks, false, nil
	}
	f := finished.t.UnixMicro()
	i := 0
	for i < len(ticks) && ticks[i] <= f {
		i++
	}
	return ticks[i:], false, nil
}
