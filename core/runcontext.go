package core

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/migrations"
)

// The bounds of a run's context.
const (
	// MaxRunContextKeyLen bounds a key of a run's context, in characters.
	MaxRunContextKeyLen = migrations.MaxRunContextKeyLen
	// MaxRunContextKeys bounds the keys of one run's context.
	MaxRunContextKeys = migrations.MaxRunContextKeys
	// MaxRunContextValueBytes bounds one value of a run's context, as JSON.
	MaxRunContextValueBytes = migrations.MaxRunContextValueLen
	// MaxRunContextBytes bounds the values of one run's context together,
	// as the database returns them.
	MaxRunContextBytes = migrations.MaxRunContextLen
)

// RunContextEntry is one key of a run's context: a small JSON value that
// an item of the run wrote (Fenced.SetRunContext) for the items after it.
type RunContextEntry struct {
	Key   string
	Value json.RawMessage
	// WrittenBy is the item whose fence wrote the value.
	WrittenBy uuid.UUID
	// UpdatedAt is when that fence wrote it, on the database clock.
	UpdatedAt time.Time
}

// RunContext returns the context of a run, ordered by key as the
// database orders text. A run that has none, or that does not exist, has
// an empty one.
func (s *Store) RunContext(ctx context.Context, run uuid.UUID) ([]RunContextEntry, error) {
	return readRows(ctx, s, "run context", s.sql(qRunContextGet), s.scanRunContext, s.d.UUID(run))
}

func (s *Store) scanRunContext(r scanner) (RunContextEntry, error) {
	var (
		e  RunContextEntry
		at = timeValue{d: s.d}
	)
	if err := r.Scan(&e.Key, (*rawJSON)(&e.Value), &e.WrittenBy, &at); err != nil {
		return RunContextEntry{}, err
	}
	e.UpdatedAt = at.t
	return e, nil
}

// SetRunContext sets key of the fenced item's run's context to value, in
// the fence's transaction: the write commits with the fence, or not at
// all, so an item whose claim was lost, or whose worker died before the
// commit, wrote nothing. The value is recorded with the fenced item as
// its writer.
//
// Writes to one run's context serialize on the run's row, which
// SetRunContext locks: when two items of a run write the same key, the
// write that commits last wins, and the bounds hold however many items
// write at once. Runs are locked after items and barriers, so call it
// after the rest of the fence's work, completing the item included
// (Complete, Then), as the pipeline engine does: earlier, a fence that
// also locks a barrier can deadlock with another item's, and runs again.
//
// key is 1 to MaxRunContextKeyLen characters under ItemSpec.Queue's rules
// for names, value valid JSON of at most MaxRunContextValueBytes; a run
// holds at most MaxRunContextKeys keys and MaxRunContextBytes of values.
// A write past either bound is an *InputError naming the key that also
// matches ErrRunContextFull, and writes nothing. The fenced item must
// belong to a run.
func (f *Fenced) SetRunContext(ctx context.Context, key string, value json.RawMessage) error {
	if err := f.usable("SetRunContext"); err != nil {
		return err
	}
	if err := validRunContext(key, value); err != nil {
		return err
	}
	field := fmt.Sprintf("run context key %q", key)
	run, err := f.runID(ctx)
	if err != nil {
		return err
	}
	if run == uuid.Nil {
		return invalid(field, "item %s belongs to no run", f.c.ID)
	}
	if _, err := f.s.lockRun(ctx, f.tx, run); err != nil {
		return err
	}
	rows, err := f.tx.QueryContext(ctx, f.s.sql(qRunContextGet), f.s.d.UUID(run))
	if err != nil {
		return err
	}
	keys, total, exists := 0, 0, false
	for rows.Next() {
		e, err := f.s.scanRunContext(rows)
		if err != nil {
			rows.Close()
			return err
		}
		if e.Key == key {
			exists = true
			continue
		}
		keys++
		total += len(e.Value)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	switch {
	case !exists && keys+1 > MaxRunContextKeys:
		return &InputError{Field: field, Reason: fmt.Sprintf("run %s holds %d keys already, the most a run's context holds", run, keys), Err: ErrRunContextFull}
	case total+len(value) > MaxRunContextBytes:
		return &InputError{Field: field, Reason: fmt.Sprintf("its %d bytes would take run %s's context to %d bytes, over the limit of %d", len(value), run, total+len(value), MaxRunContextBytes), Err: ErrRunContextFull}
	}
	by, id := f.s.d.UUID(f.c.ID), f.s.d.UUID(run)
	if !exists {
		res, err := f.tx.ExecContext(ctx, f.s.runContextOpenSQL(), id, key, f.s.d.JSON(value), by)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n > 0 {
			return err
		}
	}
	_, err = f.tx.ExecContext(ctx, f.s.sql(qRunContextSet), f.s.d.JSON(value), by, id, key)
	return err
}

// validRunContext checks a key and value of a run's context.
func validRunContext(key string, value json.RawMessage) error {
	if err := validName("key of a run's context", key, MaxRunContextKeyLen, true); err != nil {
		return err
	}
	field := fmt.Sprintf("run context key %q", key)
	switch {
	case value == nil:
		return invalid(field, "has no value (JSON null is one)")
	case len(value) > MaxRunContextValueBytes:
		return invalid(field, "its value of %d bytes is over the limit of %d", len(value), MaxRunContextValueBytes)
	case !json.Valid(value):
		return invalid(field, "its value is not valid JSON")
	case !utf8.Valid(value):
		return invalid(field, "its value is not valid UTF-8")
	}
	return nil
}

// ValidRunContext checks a key and value of a run's context as
// Fenced.SetRunContext does before it writes, for callers that collect
// writes before the fence runs: the error is the same *InputError.
func ValidRunContext(key string, value json.RawMessage) error {
	return validRunContext(key, value)
}
