package core

import (
	"context"
	"database/sql"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// Outcome is how a finished attempt that did not succeed ended.
type Outcome string

// The outcomes an attempt's history records.
const (
	// OutcomeFailed is a Fail: the handler returned an error (or
	// panicked), and the item retries or, its attempts used up or
	// discarded, is dead. The item's state says which.
	OutcomeFailed Outcome = migrations.OutcomeFailed
	// OutcomeTimeout is a lease that expired while its owner lived, found
	// by a reaper.
	OutcomeTimeout Outcome = migrations.OutcomeTimeout
	// OutcomeCrash is a claim whose owner died holding it, found by a
	// reaper.
	OutcomeCrash Outcome = migrations.OutcomeCrash
)

// Attempt is one finished attempt of an item that did not succeed.
type Attempt struct {
	// N numbers the item's recorded attempts from 1, in the order they
	// ended. A crash gives its attempt back (Item.Attempt does not count
	// it) but has its own N, so N can run ahead of Item.Attempt.
	N int
	// Outcome says how the attempt ended.
	Outcome Outcome
	// Error is the attempt's error text, as Fail recorded it (cleaned as
	// FailParams.Error says), or the reaper's reason.
	Error string
	// EndedAt is when the attempt ended, on the database clock.
	EndedAt time.Time
}

// Attempts returns the history of the item with the given id: every
// finished attempt that did not succeed (failed, timed out or crashed),
// in the order they ended. An item that never failed, or one that does not
// exist, has none. Purge deletes an item's history with it.
func (s *Store) Attempts(ctx context.Context, id uuid.UUID) ([]Attempt, error) {
	var out []Attempt
	err := s.read(ctx, "attempts", func() error {
		var err error
		out, err = s.readAttempts(ctx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readAttempts reads the history of item id once.
func (s *Store) readAttempts(ctx context.Context, id uuid.UUID) ([]Attempt, error) {
	rows, err := s.db.QueryContext(ctx, s.sql(qAttemptsList), s.d.UUID(id))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Attempt
	for rows.Next() {
		var a Attempt
		var outcome string
		var text sql.NullString
		var at any
		if err := rows.Scan(&a.N, &outcome, &text, &at); err != nil {
			return nil, err
		}
		if a.EndedAt, err = s.d.ScanTime(at); err != nil {
			return nil, err
		}
		a.Outcome, a.Error = Outcome(outcome), text.String
		out = append(out, a)
	}
	return out, rows.Err()
}

// recordAttempts writes, in one statement, one attempt with outcome and
// text for each of ids, whose rows the transaction tx has locked. The
// callers bound ids by the IN-list limit.
func (s *Store) recordAttempts(ctx context.Context, tx dialect.Querier, outcome Outcome, text string, ids []uuid.UUID) error {
	if len(ids) == 0 {
		return nil
	}
	args := make([]any, 0, len(ids)+2)
	args = append(args, string(outcome), dialect.TextArg(s.d, text))
	for _, id := range ids {
		args = append(args, s.d.UUID(id))
	}
	_, err := tx.ExecContext(ctx, s.sql(qAttemptsInsert(len(ids))), args...)
	return err
}
