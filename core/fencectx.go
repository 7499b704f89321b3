package core

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ErrInsideFence means a store method that runs its own transaction was
// called with the context a Fence passed to its function (or one derived
// from it), on the database the fence holds a transaction on. Such a call
// would wait on the fence's own row lock (or, on SQLite, on the one writer
// the fence is) until a lock timeout, if ever: inside a fence, use the
// Fenced handle instead.
var ErrInsideFence = errors.New("plenum: store called inside a fence: use the Fenced handle")

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
