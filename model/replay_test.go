package model

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/fault"
	"github.com/plenumdb/plenum/sqlite"
)

// The replays run two of the planted bugs' counterexamples against the
// real store on SQLite: the same steps in the same order, once with the
// core as it is, once with the bug planted as the statement the buggy
// core would send. The violation shows with the bug and not without it.

// replayed is a store on a fresh SQLite file, and a second store on the
// same file whose database clock runs an hour ahead: the reaper of a
// replay, to which every lease has expired and every heartbeat is stale.
type replayed struct {
	store, later *core.Store
	db           *sql.DB
}

func openReplay(t *testing.T) replayed {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "plenum.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := core.Open(t.Context(), db, sqlite.Dialect(), core.Options{Migrate: true, Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	later, err := core.Open(t.Context(), db, sqlite.Dialect(), core.Options{Prefix: prefix, ClockOffset: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return replayed{store: s, later: later, db: db}
}

func (r replayed) owner(t *testing.T) uuid.UUID {
	t.Helper()
	o, err := r.store.RegisterOwner(t.Context(), core.RegisterOwnerParams{Name: "replay"})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// claimOne claims one item on s: the store, or, after the reaper's pass,
// the store whose clock is ahead, to which the items the reaper gave back
// are available.
func claimOne(t *testing.T, s *core.Store, owner uuid.UUID) core.Claim {
	t.Helper()
	cs, err := s.Claim(t.Context(), core.ClaimParams{Queue: "q", Owner: owner, Limit: 1, Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 {
		t.Fatalf("claimed %d items, want 1", len(cs))
	}
	return cs[0]
}

func (r replayed) state(t *testing.T, c core.Claim) (string, string) {
	t.Helper()
	it, err := r.store.Get(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	return string(it.State), it.ClaimToken.String()
}

// TestReplay_NoToken replays BUG_NO_TOKEN's counterexample: worker 1
// claims, the reaper takes the claim back (its owner stale), worker 2
// claims, and worker 1 completes. The core refuses worker 1's write; the
// planted completion, conditioned on the state alone, ends worker 2's
// claim under it.
func TestReplay_NoToken(t *testing.T) {
	for _, planted := range []bool{false, true} {
		name := "core"
		if planted {
			name = "planted"
		}
		t.Run(name, func(t *testing.T) {
			r := openReplay(t)
			ctx := t.Context()
			d := sqlite.Dialect()
			if _, err := r.store.Enqueue(ctx, core.ItemSpec{Queue: "q", Kind: "k"}); err != nil {
				t.Fatal(err)
			}
			first := claimOne(t, r.store, r.owner(t))
			got, err := r.later.Reap(ctx, core.ReapParams{StaleAfter: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if got.Crashed != 1 {
				t.Fatalf("the reaper took back %d claims, want 1", got.Crashed)
			}
			second := claimOne(t, r.later, r.owner(t))
			if planted {
				res, err := r.db.ExecContext(ctx, "UPDATE "+prefix+"items SET state = 'completed' WHERE id = ? AND state = 'claimed'", d.UUID(first.ID))
				if err != nil {
					t.Fatal(err)
				}
				if n, _ := res.RowsAffected(); n != 1 {
					t.Fatalf("the planted completion changed %d rows, want 1 (the violation)", n)
				}
				st, tok := r.state(t, second)
				if st != "completed" || tok != second.Token.String() {
					t.Fatalf("state %s, token %s", st, tok)
				}
				t.Logf("violation, as in the model: worker 1's completion committed while worker 2 holds the claim (token %s)", tok)
				return
			}
			err = r.store.Complete(ctx, first, nil)
			if !errors.Is(err, core.ErrClaimLost) {
				t.Fatalf("worker 1's completion: %v, want ErrClaimLost", err)
			}
			st, tok := r.state(t, second)
			if st != "claimed" || tok != second.Token.String() {
				t.Fatalf("after worker 1's refused completion: state %s, token %s; want worker 2's claim", st, tok)
			}
			if err := r.store.Complete(ctx, second, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestReplay_ArrivalSplit replays BUG_ARRIVAL_SPLIT's counterexample: a
// child's completion, then a crash before its arrival is counted, at the
// injection point between the two (fault.CompleteBeforeArrival). In the
// core both are one transaction, rolled back together: the reaper gives
// the child back, it completes again, and the barrier fires. With the
// arrival planted in a transaction of its own, the completion stays and
// the arrival is lost: the barrier never fires.
func TestReplay_ArrivalSplit(t *testing.T) {
	for _, planted := range []bool{false, true} {
		name := "core"
		if planted {
			name = "planted"
		}
		t.Run(name, func(t *testing.T) {
			r := openReplay(t)
			ctx := t.Context()
			d := sqlite.Dialect()
			if _, err := r.store.Enqueue(ctx, core.ItemSpec{Queue: "q", Kind: "parent"}); err != nil {
				t.Fatal(err)
			}
			parent := claimOne(t, r.store, r.owner(t))
			ex, err := r.store.Expand(ctx, parent, core.ExpandParams{
				Barrier:        core.BarrierSpec{Name: "x", Join: core.JoinSpec{Queue: "joins", Kind: "join"}},
				CompleteParent: true,
				Next: func(context.Context, string) (core.ChildPage, error) {
					return core.ChildPage{Children: []core.ChildSpec{{Key: "c", Kind: "child"}}, Done: true}, nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			child := claimOne(t, r.store, r.owner(t))
			crash := fault.With(ctx, fault.CompleteBeforeArrival, fault.Rule{Action: fault.Error})
			if planted {
				// The completion commits on its own; the process dies at
				// the point before its arrival.
				if _, err := r.db.ExecContext(ctx, "UPDATE "+prefix+"items SET state = 'completed' WHERE id = ? AND claim_token = ? AND state = 'claimed'", d.UUID(child.ID), d.UUID(child.Token)); err != nil {
					t.Fatal(err)
				}
				if err := fault.Hit(crash, fault.CompleteBeforeArrival); !errors.Is(err, fault.ErrInjected) {
					t.Fatalf("the injection point: %v", err)
				}
			} else if err := r.store.Complete(crash, child, nil); !errors.Is(err, fault.ErrInjected) {
				t.Fatalf("the completion at the injection point: %v, want the injected crash", err)
			}
			if _, err := r.later.Reap(ctx, core.ReapParams{StaleAfter: time.Minute}); err != nil {
				t.Fatal(err)
			}
			if !planted {
				again := claimOne(t, r.later, r.owner(t))
				if err := r.later.Complete(ctx, again, nil); err != nil {
					t.Fatal(err)
				}
			}
			b, err := r.store.GetBarrier(ctx, ex.Barrier.ID)
			if err != nil {
				t.Fatal(err)
			}
			st, _ := r.state(t, child)
			if planted {
				if b.Fired() || st != "completed" {
					t.Fatalf("fired %v, child %s: want the child completed and the barrier unfired", b.Fired(), st)
				}
				t.Logf("violation, as in the model: the child completed, its arrival lost (arrived %d of %d), the barrier never fires", b.Arrived, b.Expected)
				return
			}
			if !b.Fired() || b.Arrived != 1 {
				t.Fatalf("fired %v, arrived %d: want the barrier fired once, with one arrival", b.Fired(), b.Arrived)
			}
		})
	}
}
