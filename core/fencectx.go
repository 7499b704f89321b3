package core

import (
	"context"
	"database/sql"
	"fmt"
)

// fenceKey marks a fence's context with the database it holds a
// transaction on.
type fenceKey struct{}

// markFence returns ctx marked as running inside a fence on db.
func markFence(ctx context.Context, db *sql.DB) context.Context {
	return context.WithValue(ctx, fenceKey{}, db)
}

// insideFence returns ErrInsideFence, wrapped with op, when ctx was marked
// by a fence on the store's database.
func (s *Store) insideFence(ctx context.Context, op string) error {
	if db, _ := ctx.Value(fenceKey{}).(*sql.DB); db != nil && db == s.db {
		return fmt.Errorf("plenum: %s: %w", op, ErrInsideFence)
	}
	return nil
}

// Fail records a failed attempt of the fenced item in the fence's
// transaction, as Store.Fail does: available again after a backoff on the
// database clock, or dead when its attempts are used up or p.Discard is
// set (a failed arrival at its barrier). It reports whether the item is
// now dead. Everything else written through the handle commits with it.
func (f *Fenced) Fail(ctx context.Context, p FailParams) (dead bool, err error) {
	if p.RetryIn < 0 || p.RetryIn > MaxDelay {
		return false, invalid("RetryIn", "%v is outside [0, %v]", p.RetryIn, MaxDelay)
	}
	if f.completed {
		return false, fmt.Errorf("plenum: fail %s: completed in this fence: %w", f.c.ID, ErrFinished)
	}
	if err := f.usable("Fail"); err != nil {
		return false, err
	}
	return f.s.fail(ctx, f.tx, f.c, p)
}
