package core

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// SignalSpec describes a signal sent to a run.
type SignalSpec struct {
	// Run is the run the signal is for: required, and not finished.
	Run uuid.UUID
	// Name is what items of the run wait on (Fenced.Await): required, 1 to 128
	// characters, under ItemSpec.Queue's rules for names.
	Name string
	// Key makes sending idempotent: a signal with the same Run, Name and Key
	// is stored once, however often it is sent. Required, 1 to 200 characters,
	// like Name a name.
	Key string
	// Payload is a JSON document (or nil) under the rules of
	// ItemSpec.Payload.
	Payload json.RawMessage
}

// Signal is a signal as stored.
type Signal struct {
	ID      uuid.UUID
	Run     uuid.UUID
	Name    string
	Key     string
	Payload json.RawMessage
	// TakenBy is the item that took the signal (Fenced.Await), uuid.Nil
	// while it waits to be taken.
	TakenBy   uuid.UUID
	CreatedAt time.Time
	TakenAt   time.Time
}

// SignalResult is the outcome of Store.Signal.
type SignalResult struct {
	ID uuid.UUID
	// Existed is true when the signal (Run, Name, Key) was already stored:
	// nothing changed.
	Existed bool
	// Woken counts the items of the run that waited on Name and were
	// made claimable at once.
	Woken int
}

// Signal stores a signal for a run, once per (Run, Name, Key), and in the
// same transaction makes every item of the run that waits on Name
// (Fenced.Await) claimable at once; after the commit it wakes this
// process's subscribers of those items' queues, so a polling worker picks
// them up without waiting for its next poll. The signal is kept until an
// item takes it: one sent before anyone waits is there for the first
// waiter. A signal to a finished run is ErrRunFinished; to no run,
// ErrNotFound.
func (s *Store) Signal(ctx context.Context, spec SignalSpec) (SignalResult, error) {
	if spec.Run == uuid.Nil {
		return SignalResult{}, invalid("Run", "must name a run")
	}
	if err := validName("Name", spec.Name, migrations.MaxSignalNameLen, true); err != nil {
		return SignalResult{}, err
	}
	if err := validName("Key", spec.Key, migrations.MaxKeyLen, true); err != nil {
		return SignalResult{}, err
	}
	if err := s.validJSON("Payload", spec.Payload); err != nil {
		return SignalResult{}, err
	}
	var out SignalResult
	err := s.inTx(ctx, "signal", func(tx dialect.Tx) error {
		var err error
		out, err = s.signal(ctx, tx, spec)
		return err
	})
	return out, err
}

func (s *Store) signal(ctx context.Context, tx dialect.Querier, spec SignalSpec) (SignalResult, error) {
	// The run's lock orders this against every Await of the run: a waiter
	// that committed before it is seen below, one that comes after sees
	// the signal.
	lr, err := s.lockRun(ctx, tx, spec.Run)
	if err != nil {
		return SignalResult{}, err
	}
	if lr.state.Final() {
		return SignalResult{}, fmt.Errorf("plenum: signal run %s (%s): %w", spec.Run, lr.state, ErrRunFinished)
	}
	id := uuid.Must(uuid.NewV7())
	res, err := tx.ExecContext(ctx, s.signalOpenSQL(), s.d.UUID(id), s.d.UUID(spec.Run), spec.Name, spec.Key, s.jsonArg(spec.Payload))
	if err != nil {
		return SignalResult{}, err
	}
	if n, err := res.RowsAffected(); err != nil {
		return SignalResult{}, err
	} else if n == 0 {
		var existing uuid.UUID
		err := tx.QueryRowContext(ctx, s.sql(qSignalByKey), s.d.UUID(spec.Run), spec.Name, spec.Key).Scan(&existing)
		return SignalResult{ID: existing, Existed: true}, err
	}
	out := SignalResult{ID: id}
	rows, err := tx.QueryContext(ctx, s.sql(qWaiters), s.d.UUID(spec.Run), spec.Name)
	if err != nil {
		return SignalResult{}, err
	}
	var ids []uuid.UUID
	var queues []string
	for rows.Next() {
		var w uuid.UUID
		var q string
		if err := rows.Scan(&w, &q); err != nil {
			rows.Close()
			return SignalResult{}, err
		}
		ids = append(ids, w)
		if !slices.Contains(queues, q) {
			queues = append(queues, q)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return SignalResult{}, err
	}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return bytes.Compare(a[:], b[:]) })
	for _, chunk := range chunks(ids, s.wakeMax()) {
		args := make([]any, 0, len(chunk)+1)
		for _, w := range chunk {
			args = append(args, s.d.UUID(w))
		}
		res, err := tx.ExecContext(ctx, s.sql(qWake(len(chunk))), append(args, spec.Name)...)
		if err != nil {
			return SignalResult{}, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return SignalResult{}, err
		}
		out.Woken += int(n)
		for _, w := range chunk {
			if err := s.wakeItemLane(ctx, tx, w); err != nil {
				return SignalResult{}, err
			}
		}
	}
	if out.Woken > 0 {
		if err := s.itemsReady(ctx, tx, queues...); err != nil {
			return SignalResult{}, err
		}
	}
	return out, nil
}

// AwaitParams say what a fenced item waits for.
type AwaitParams struct {
	// Name is the signal's name: required, 1 to 128 characters, under
	// ItemSpec.Queue's rules for names.
	Name string
	// Timeout bounds the wait, on the database clock, from the first
	// Await of this name by this item: 0 for none, else up to MaxDelay.
	// Later Awaits of the same name keep the first deadline.
	Timeout time.Duration
}

// AwaitResult is the outcome of Fenced.Await: exactly one of Signal,
// TimedOut and Waiting is set.
type AwaitResult struct {
	// Signal is the signal taken, exactly once: no other Await of any item
	// takes it (if the fence commits).
	Signal *Signal
	// TimedOut: no signal came before the deadline.
	TimedOut bool
	// Waiting: no signal yet. When the fence commits, the item gives its
	// claim back (its attempt is not counted) and waits: it is not
	// claimable until a signal of that name comes or the deadline passes.
	// The handler then stops without completing or failing the item (both
	// would find the claim lost); the item is claimed again later and its
	// handler calls Await again, which then returns the signal or the
	// timeout.
	Waiting bool
}

// Await takes an untaken signal named p.Name sent to the fenced item's run,
// if there is one (the oldest first), or else puts the item into waiting
// for one (see AwaitResult). The item must belong to a run.
//
// A waiting item is stored as an available item whose available_at is its
// deadline (or MaxDelay ahead without one), with the name it waits on:
// the claim's statement and index are those of every other item, so
// waiting costs the claim path nothing, and a deadline that passes makes
// the item claimable with no sweep. Item.Waiting reports it. A signal moves
// available_at to now.
//
// A waiter and a signal sender both lock the run's row before they look
// for each other, so neither can miss the other: a signal sent while the
// waiter's fence runs is found by it or wakes it.
func (f *Fenced) Await(ctx context.Context, p AwaitParams) (AwaitResult, error) {
	s := f.s
	if err := f.usable("Await"); err != nil {
		return AwaitResult{}, err
	}
	if f.completed {
		return AwaitResult{}, invalid("Await", "the fenced item was already completed in this fence")
	}
	if err := validName("Name", p.Name, migrations.MaxSignalNameLen, true); err != nil {
		return AwaitResult{}, err
	}
	if p.Timeout < 0 || p.Timeout > MaxDelay {
		return AwaitResult{}, invalid("Timeout", "%v is outside [0, %v]", p.Timeout, MaxDelay)
	}
	run, err := f.runID(ctx)
	if err != nil {
		return AwaitResult{}, err
	}
	if run == uuid.Nil {
		return AwaitResult{}, invalid("Await", "item %s belongs to no run: signals are sent to runs", f.c.ID)
	}
	if _, err := s.lockRun(ctx, f.tx, run); err != nil {
		return AwaitResult{}, err
	}
	var (
		name  sql.NullString
		until = timeValue{d: s.d}
		due   int
	)
	if err := f.tx.QueryRowContext(ctx, s.sql(qItemWait), s.d.UUID(f.c.ID)).Scan(&name, &until, &due); err != nil {
		return AwaitResult{}, err
	}
	again := name.Valid && name.String == p.Name
	sig, err := f.takeSignal(ctx, run, p.Name)
	if err != nil {
		return AwaitResult{}, err
	}
	if sig != nil || (again && !until.t.IsZero() && due == 1) {
		if name.Valid {
			if _, err := f.tx.ExecContext(ctx, s.sql(qItemWaitClear), s.d.UUID(f.c.ID)); err != nil {
				return AwaitResult{}, err
			}
		}
		return AwaitResult{Signal: sig, TimedOut: sig == nil}, nil
	}
	// Wait: give the claim back, claimable at the deadline, and its lane
	// a turn then (for a second Await, which keeps the first deadline, a
	// turn now: the claim that finds the item not yet due turns the lane
	// to the item's time).
	var at time.Duration
	switch {
	case again && !until.t.IsZero():
		_, err = f.tx.ExecContext(ctx, s.sql(qAwaitAgain), s.d.UUID(f.c.ID))
	case p.Timeout > 0:
		at = p.Timeout
		_, err = f.tx.ExecContext(ctx, s.sql(qAwaitDeadline), micros(p.Timeout), p.Name, micros(p.Timeout), s.d.UUID(f.c.ID))
	default:
		at = MaxDelay
		_, err = f.tx.ExecContext(ctx, s.sql(qAwaitNoDeadline), micros(MaxDelay), p.Name, s.d.UUID(f.c.ID))
	}
	if err != nil {
		return AwaitResult{}, err
	}
	if err := s.handBack(ctx, f.tx, []laneRef{f.h.lane(at)}); err != nil {
		return AwaitResult{}, err
	}
	f.waiting = true
	return AwaitResult{Waiting: true}, nil
}

// takeSignal takes the oldest untaken signal named name of run for the
// fenced item, or returns nil. The signals are read with a locking read
// (the latest committed rows, on every database), under the run's lock.
func (f *Fenced) takeSignal(ctx context.Context, run uuid.UUID, name string) (*Signal, error) {
	s := f.s
	rows, err := f.tx.QueryContext(ctx, s.sql(qSignalsUntaken), s.d.UUID(run), name)
	if err != nil {
		return nil, err
	}
	var cands []Signal
	for rows.Next() {
		sg, err := scanSignal(s.d, rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		cands = append(cands, sg)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, sg := range cands {
		res, err := f.tx.ExecContext(ctx, s.sql(qSignalTake), s.d.UUID(f.c.ID), s.d.UUID(sg.ID))
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil {
			return nil, err
		} else if n == 1 {
			sg.TakenBy = f.c.ID
			return &sg, nil
		}
	}
	return nil, nil
}

func scanSignal(d dialect.Dialect, r scanner) (Signal, error) {
	var (
		sg               Signal
		taken            uuid.NullUUID
		created, takenAt = timeValue{d: d}, timeValue{d: d}
	)
	if err := r.Scan(&sg.ID, &sg.Run, &sg.Name, &sg.Key, (*rawJSON)(&sg.Payload), &taken, &created, &takenAt); err != nil {
		return Signal{}, err
	}
	sg.TakenBy, sg.CreatedAt, sg.TakenAt = taken.UUID, created.t, takenAt.t
	return sg, nil
}

// Signals returns the signals sent to a run, in the order they were sent
// (at most 10,000).
func (s *Store) Signals(ctx context.Context, run uuid.UUID) ([]Signal, error) {
	return readRows(ctx, s, "signals", s.sql(qSignalsOfRun(s.d, maxPage)), func(r scanner) (Signal, error) { return scanSignal(s.d, r) }, s.d.UUID(run))
}
