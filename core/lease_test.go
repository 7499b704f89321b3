package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/sqlite"
)

// skewed is SQLite dressed as a database whose nodes' clocks may be 500 ms
// apart.
type skewed struct{ dialect.Dialect }

func (s skewed) Capabilities() dialect.Capabilities {
	caps := s.Dialect.Capabilities()
	caps.MaxClockOffset = 500 * time.Millisecond
	return caps
}

// TestMinLease_FollowsClockOffset checks that a dialect's clock offset
// raises the shortest lease and StaleAfter the store accepts, and that
// leases at the new minimum work.
func TestMinLease_FollowsClockOffset(t *testing.T) {
	ctx := context.Background()
	o := openStore(t, skewed{sqlite.Dialect()}, core.Options{})
	s, owner := o.store, o.owner
	plain, err := core.Open(ctx, o.db, sqlite.Dialect(), core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := plain.MinLease(); got != core.MinLease {
		t.Fatalf("one clock: MinLease = %v, want %v", got, core.MinLease)
	}
	if got := s.MinLease(); got != 2*time.Second {
		t.Fatalf("500 ms offset: MinLease = %v, want 2s", got)
	}
	if _, err := s.Enqueue(ctx, core.ItemSpec{Queue: "q", Kind: "k"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"claim", func() error {
			_, err := s.Claim(ctx, core.ClaimParams{Queue: "q", Owner: owner, Limit: 1, Lease: 1500 * time.Millisecond})
			return err
		}()},
		{"extend many", func() error {
			_, err := s.ExtendMany(ctx, []core.Claim{{Item: core.Item{ID: uuid.New()}, Token: uuid.New(), Owner: owner}}, time.Second)
			return err
		}()},
		{"reap", func() error { _, err := s.Reap(ctx, core.ReapParams{StaleAfter: 3 * time.Second}); return err }()},
		{"extend", s.Extend(ctx, core.Claim{Item: core.Item{ID: uuid.New()}, Token: uuid.New(), Owner: owner}, time.Second)},
	} {
		if !errors.Is(tc.err, core.ErrInvalidInput) {
			t.Errorf("%s below the raised minimum: err = %v, want ErrInvalidInput", tc.name, tc.err)
		}
	}
	cs, err := s.Claim(ctx, core.ClaimParams{Queue: "q", Owner: owner, Limit: 1, Lease: 2 * time.Second})
	if err != nil || len(cs) != 1 {
		t.Fatalf("claim at the minimum: %d claims, err %v", len(cs), err)
	}
	if _, err := s.Reap(ctx, core.ReapParams{StaleAfter: 4 * time.Second}); err != nil {
		t.Fatalf("reap at twice the minimum: %v", err)
	}
}
