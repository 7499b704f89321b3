package core

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/dialect/sqlkit"
	"github.com/plenumdb/plenum/migrations"
)

// MaxProgressOutputBytes bounds the partial output of an item's progress,
// as JSON.
const MaxProgressOutputBytes = migrations.MaxProgressOutputLen

// Progress is what a running handler reports of its item's work
// (SetProgress): counters of the work done, and a small partial output,
// for readers of the store (the dashboard, the next step of a pipeline,
// the handler's own next attempt).
type Progress struct {
	// Done counts the units of work done: at least 0, at most Total
	// when Total is set.
	Done int64
	// Total counts the units of work in all; 0 when unknown.
	Total int64
	// Output is the partial output so far: a JSON document of at most
	// MaxProgressOutputBytes, or nil for none. It is refused as a
	// payload is (valid JSON every database stores).
	Output json.RawMessage

	// Attempt is the attempt of the item that wrote the progress, as
	// read back (Store.Progress); ignored when writing.
	Attempt int
	// UpdatedAt is when it was written, on the database clock, as read
	// back; ignored when writing.
	UpdatedAt time.Time
}

// Fraction returns Done over Total, and false when Total is unknown (0).
func (p Progress) Fraction() (float64, bool) {
	if p.Total <= 0 {
		return 0, false
	}
	return float64(p.Done) / float64(p.Total), true
}

// ValidProgress checks p as SetProgress does before it writes, for
// callers that keep a report before writing it (the worker's jobs): the
// error is the same *InputError.
func ValidProgress(p Progress) error {
	switch {
	case p.Done < 0:
		return invalid("Progress.Done", "%d is negative", p.Done)
	case p.Total < 0:
		return invalid("Progress.Total", "%d is negative", p.Total)
	case p.Total > 0 && p.Done > p.Total:
		return invalid("Progress.Done", "%d is over Total %d", p.Done, p.Total)
	case len(p.Output) > MaxProgressOutputBytes:
		return invalid("Progress.Output", "%d bytes is over the limit of %d (MaxProgressOutputBytes)", len(p.Output), MaxProgressOutputBytes)
	}
	return checkDoc("Progress.Output", p.Output)
}

// SetProgress records p as the fenced item's progress, in the fence's
// transaction: it commits with the fence or not at all, so a holder
// whose claim was lost writes nothing. The progress replaces the
// item's last one, whichever attempt wrote that.
func (f *Fenced) SetProgress(ctx context.Context, p Progress) error {
	if err := f.usable("SetProgress"); err != nil {
		return err
	}
	if err := ValidProgress(p); err != nil {
		return err
	}
	return f.s.writeProgress(ctx, f.tx, f.c, p)
}

// SetProgress records p as the progress of c's item, in a short
// transaction of its own, only while c is still the item's claim: the
// write is conditioned on the item's row holding c's token (a fence, as
// Fence takes it), so a holder whose claim was reaped and taken by
// another, or that lost it to a cancel, changes nothing and gets
// held == false, no error. It is what a handler calls while it runs,
// outside the transaction that will complete its item; each call is a
// transaction, so call it at most every second or so (the worker's
// Job.SetProgress coalesces calls to that). Inside a fence, call
// Fenced.SetProgress instead.
//
// The progress is kept as the item's last report: by later attempts
// (which overwrite it when they report their own), after the item
// finishes, and until retention deletes it with its item. Done and Total
// are at least 0, Done at most Total when Total is set; Output is at most
// MaxProgressOutputBytes of JSON that every database stores. A report out
// of bounds is an *InputError, and writes nothing.
func (s *Store) SetProgress(ctx context.Context, c Claim, p Progress) (held bool, err error) {
	if err := ValidProgress(p); err != nil {
		return false, err
	}
	return s.Fence(ctx, c, func(ctx context.Context, f *Fenced) error {
		return s.writeProgress(ctx, f.tx, c, p)
	})
}

// writeProgress writes p as c's item's progress in tx, which holds the
// item's row lock: an update of its row, or its first row. Every writer
// of an item's progress holds that lock, so no two write it at once.
func (s *Store) writeProgress(ctx context.Context, tx dialect.Querier, c Claim, p Progress) error {
	out := s.jsonArg(p.Output)
	id := s.d.UUID(c.ID)
	res, err := tx.ExecContext(ctx, s.sql(qProgressSet), p.Done, p.Total, out, c.Attempt, id)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n > 0 {
		return err
	}
	// No row was changed: none yet, or (where the database counts changed
	// rows, not matched ones) the same values again, which the
	// insert-or-ignore leaves as they are.
	_, err = tx.ExecContext(ctx, s.progressOpenSQL(), id, p.Done, p.Total, out, c.Attempt)
	return err
}

// Progress returns the last progress reported for item (SetProgress),
// and false when none was, or the item does not exist.
func (s *Store) Progress(ctx context.Context, item uuid.UUID) (Progress, bool, error) {
	var (
		p  Progress
		ok bool
	)
	err := s.read(ctx, "progress", func() error {
		at := timeValue{d: s.d}
		var out rawJSON
		err := s.db.QueryRowContext(ctx, s.sql(qProgressGet), s.d.UUID(item)).Scan(&p.Done, &p.Total, &out, &p.Attempt, &at)
		if sqlkit.IsNoRows(err) {
			ok = false
			return nil
		}
		if err != nil {
			return err
		}
		p.Output, p.UpdatedAt, ok = json.RawMessage(out), at.t, true
		return nil
	})
	if err != nil || !ok {
		return Progress{}, false, err
	}
	return p, true, nil
}
