package core_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/wiretap"
	"github.com/plenumdb/plenum/sqlite"
)

// TestReads_TransientErrorsRetried checks that the store's reads outside a
// transaction (Get, Counts, Children, GetBarrier, UnfiredBarriers,
// Attempts, Queues, Lost, Now) run again after a transient error, as its
// transactions do, instead of handing a serializable database's abort of
// a plain read to the caller.
func TestReads_TransientErrorsRetried(t *testing.T) {
	// The next failQueries queries fail with errTransient: a serializable
	// database's abort of a plain read, which the faulty dialect classifies
	// as retryable.
	var failQueries atomic.Int64
	tap := wiretap.Tap{FailQuery: func() error {
		if failQueries.Add(-1) >= 0 {
			return errTransient
		}
		return nil
	}}
	db := wiretap.Open(t, &tap, filepath.Join(t.TempDir(), "reads.db"))
	ctx := context.Background()
	s, err := core.Open(ctx, db, &faulty{Dialect: sqlite.Dialect()}, core.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := s.Enqueue(ctx, core.ItemSpec{Queue: "q"})
	if err != nil {
		t.Fatal(err)
	}
	owner, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	claims, err := s.Claim(ctx, core.ClaimParams{Queue: "q", Owner: owner, Limit: 1, Lease: time.Minute})
	if err != nil || len(claims) != 1 {
		t.Fatalf("claim: %v, %v", claims, err)
	}
	reads := map[string]func() error{
		"Get":    func() error { _, err := s.Get(ctx, ids[0].ID); return err },
		"Counts": func() error { _, err := s.Counts(ctx, "q"); return err },
		"Children": func() error {
			_, err := s.Children(ctx, core.ChildrenParams{Barrier: uuid.New(), Limit: 10})
			return err
		},
		"UnfiredBarriers": func() error { _, err := s.UnfiredBarriers(ctx, core.UnfiredBarriersParams{}); return err },
		"Attempts":        func() error { _, err := s.Attempts(ctx, ids[0].ID); return err },
		"Queues":          func() error { _, err := s.Queues(ctx); return err },
		"Lost":            func() error { _, err := s.Lost(ctx, claims); return err },
		"Now":             func() error { _, err := s.Now(ctx); return err },
	}
	for name, read := range reads {
		before := s.Stats().Retries
		failQueries.Store(2)
		if err := read(); err != nil {
			t.Errorf("%s after two transient failures: %v", name, err)
		}
		if got := s.Stats().Retries - before; got != 2 {
			t.Errorf("%s: %d retries counted, want 2", name, got)
		}
	}
	failQueries.Store(0)
}
