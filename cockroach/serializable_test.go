package cockroach

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// pgSSISkips are the conformance subtests the PostgreSQL-compatible mode
// skips, and why. PostgreSQL's SERIALIZABLE is not CockroachDB's: its
// predicate locks cover a whole heap page as soon as a transaction reads
// three rows of it (max_pred_locks_per_page), and a serializable statement
// that meets a row another transaction updated and committed after its
// snapshot fails ("concurrent update") instead of waiting, where
// CockroachDB's UPDATE locks the rows it reads and waits
// (enable_implicit_select_for_update) and refreshes its reads or retries
// on the server where it can (docs: Transactions, automatic retries). So
// claims, completions and reaps of the same few pages fail in a loop, and
// with 8 or 16 workers at once they use up the store's default 10
// attempts: these subtests then fail with a 40001 that was retried as it
// should have been. The TestSerializable_* tests check the same guarantees
// here with a retry budget that fits PostgreSQL (cockroach-go, CockroachDB's
// own client library, retries up to 50 times), and TestCockroachDB runs
// them unchanged against CockroachDB.
var pgSSISkips = map[string]string{
	"Claim_ExclusiveUnderConcurrency":       "16 claimers on a few pages use up 10 attempts under PostgreSQL's SSI; see TestSerializable_ClaimExclusiveUnderContention",
	"Claim_LocksOnlyRowsItTakes":            "its TwoOpenTransactions commits two claims it held open together without a retry; under PostgreSQL's SSI the second commit always fails with 40001 (the rows share a heap page); see TestSerializable_TwoOpenClaimsTakeDisjointRows",
	"FanIn_ExactlyOnceUnderConcurrency":     "16 workers finishing children of one barrier use up 10 attempts under PostgreSQL's SSI; see TestSerializable_FanInUnderContention",
	"Transient_RetriedUnderContention":      "16 stores completing children of one barrier use up 10 attempts under PostgreSQL's SSI; see TestSerializable_FanInUnderContention",
	"Recovery_ConcurrentReapersReleaseOnce": "8 reapers updating the same claims fail with 40001 (concurrent update) where CockroachDB's UPDATE locks the rows and waits, and use up 10 attempts in about half of all runs; see TestSerializable_ConcurrentReapersReleaseOnce",
}

// serializableStore opens a store of the PostgreSQL-compatible dialect on
// tables of its own, with a retry budget that fits PostgreSQL's SSI.
func serializableStore(t *testing.T, d *counting, db *sql.DB) *core.Store {
	t.Helper()
	prefix := fmt.Sprintf("pz%08x_", rand.Uint32())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := migrations.Drop(ctx, db, d, prefix); err != nil {
			t.Errorf("drop %s: %v", prefix, err)
		}
	})
	s, err := core.Open(t.Context(), db, d, core.Options{Prefix: prefix, Migrate: true,
		Retry: core.RetryPolicy{MaxAttempts: 100, BaseDelay: 2 * time.Millisecond, MaxDelay: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSerializable_ClaimExclusiveUnderContention(t *testing.T) {
	dsn := serializableDSN(t)
	d := newCounting(postgresCompatible(lockTableFor(t, dsn)))
	db := conformance.Opener(DriverName, dsn)(t)
	s := serializableStore(t, d, db)
	ctx := t.Context()
	const workers, n = 16, 400
	specs := make([]core.ItemSpec, n)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: "x", Payload: json.RawMessage(fmt.Sprint(i))}
	}
	if _, err := s.Enqueue(ctx, specs...); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	holder := map[uuid.UUID]int{}
	done := map[uuid.UUID]int{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			owner, err := s.RegisterOwner(ctx, core.OwnerParams{Host: "serializable"})
			if err != nil {
				t.Error(err)
				return
			}
			for {
				cs, err := s.Claim(ctx, core.ClaimParams{Queue: "x", Owner: owner, Limit: 1 + rand.IntN(10), Lease: time.Minute})
				if err != nil {
					t.Errorf("worker %d: Claim: %v", w, err)
					return
				}
				if len(cs) == 0 {
					return
				}
				mu.Lock()
				for _, c := range cs {
					if h, ok := holder[c.ID]; ok {
						t.Errorf("worker %d claimed %s held by worker %d", w, c.ID, h)
					}
					holder[c.ID] = w
				}
				mu.Unlock()
				comps := make([]core.Completion, len(cs))
				for i, c := range cs {
					comps[i] = core.Completion{Claim: c}
				}
				if lost, err := s.CompleteMany(ctx, comps); err != nil || len(lost) > 0 {
					t.Errorf("worker %d: CompleteMany: lost %v, %v", w, lost, err)
					return
				}
				mu.Lock()
				for _, c := range cs {
					delete(holder, c.ID)
					done[c.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(done) != n {
		t.Errorf("%d items completed, want %d", len(done), n)
	}
	for id, k := range done {
		if k != 1 {
			t.Errorf("item %s completed %d times", id, k)
		}
	}
	total, byCode := d.counts()
	t.Logf("%d items, %d claimers at SERIALIZABLE: %d transactions retried (%s), store retries %d", n, workers, total, byCode, s.Stats().Retries)
}

// TestSerializable_FanInUnderContention has 16 workers finish the children
// of one barrier, every arrival counted on the same barrier row: each is
// counted once, and the barrier fires once.
func TestSerializable_FanInUnderContention(t *testing.T) {
	dsn := serializableDSN(t)
	d := newCounting(postgresCompatible(lockTableFor(t, dsn)))
	db := conformance.Opener(DriverName, dsn)(t)
	s := serializableStore(t, d, db)
	ctx := t.Context()
	const workers, kids = 16, 160
	if _, err := s.Enqueue(ctx, core.ItemSpec{Queue: "parent"}); err != nil {
		t.Fatal(err)
	}
	owner, err := s.RegisterOwner(ctx, core.OwnerParams{Host: "serializable"})
	if err != nil {
		t.Fatal(err)
	}
	parent, err := s.Claim(ctx, core.ClaimParams{Queue: "parent", Owner: owner, Limit: 1, Lease: time.Minute})
	if err != nil || len(parent) != 1 {
		t.Fatalf("claim parent: %d, %v", len(parent), err)
	}
	children := make([]core.ChildSpec, kids)
	for i := range children {
		children[i] = core.ChildSpec{Key: fmt.Sprint(i), Queue: "kids"}
	}
	r, err := s.Expand(ctx, parent[0], core.ExpandParams{
		Barrier: core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "join"}},
		Next: func(context.Context, string) (core.ChildPage, error) {
			return core.ChildPage{Children: children, Next: "end", Done: true}, nil
		},
		CompleteParent: true,
	})
	if err != nil || r.Inserted != kids {
		t.Fatalf("Expand: %+v, %v", r, err)
	}
	var completed atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			o, err := s.RegisterOwner(ctx, core.OwnerParams{Host: "serializable"})
			if err != nil {
				t.Error(err)
				return
			}
			for {
				cs, err := s.Claim(ctx, core.ClaimParams{Queue: "kids", Owner: o, Limit: 1, Lease: time.Minute})
				if err != nil {
					t.Errorf("worker %d: Claim: %v", w, err)
					return
				}
				if len(cs) == 0 {
					return
				}
				if w%2 == 0 {
					held, err := s.Fence(ctx, cs[0], func(ctx context.Context, f *core.Fenced) error { return f.Complete(ctx, nil) })
					if !held || err != nil {
						t.Errorf("worker %d: Fence: %v, %v", w, held, err)
						return
					}
				} else if err := s.Complete(ctx, cs[0], nil); err != nil {
					t.Errorf("worker %d: Complete: %v", w, err)
					return
				}
				completed.Add(1)
			}
		})
	}
	wg.Wait()
	b, err := s.GetBarrier(ctx, r.Barrier.ID)
	if err != nil {
		t.Fatal(err)
	}
	if completed.Load() != kids || b.Arrived != kids || !b.Fired() {
		t.Errorf("completed %d, barrier arrived %d, fired %v; want %d, %d, fired", completed.Load(), b.Arrived, b.Fired(), kids, kids)
	}
	var joins int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+migrations.NamesFor(s.Prefix()).Items+" WHERE join_barrier_id = $1", b.ID.String()).Scan(&joins); err != nil || joins != 1 {
		t.Errorf("%d join items, %v; want 1", joins, err)
	}
	total, byCode := d.counts()
	t.Logf("%d children of one barrier, %d workers at SERIALIZABLE: %d transactions retried (%s), store retries %d", kids, workers, total, byCode, s.Stats().Retries)
}

// TestSerializable_TwoOpenClaimsTakeDisjointRows holds two claim
// transactions open at once: the second takes n other rows without
// waiting on the first's. Under PostgreSQL's SSI the first commit after
// the second then fails with a retryable error, as a serializable
// database may; run again, it takes its rows.
func TestSerializable_TwoOpenClaimsTakeDisjointRows(t *testing.T) {
	dsn := serializableDSN(t)
	d := newCounting(postgresCompatible(lockTableFor(t, dsn)))
	db := conformance.Opener(DriverName, dsn)(t)
	s := serializableStore(t, d, db)
	ctx := t.Context()
	const n = 10
	specs := make([]core.ItemSpec, 2*n)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: "open"}
	}
	if _, err := s.Enqueue(ctx, specs...); err != nil {
		t.Fatal(err)
	}
	a, err := s.RegisterOwner(ctx, core.OwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.RegisterOwner(ctx, core.OwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	params := func(o uuid.UUID) core.ClaimParams {
		return core.ClaimParams{Queue: "open", Owner: o, Limit: n, Lease: time.Minute}
	}
	txA, err := s.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer txA.Rollback()
	ca, err := s.ClaimTx(ctx, txA, params(a))
	if err != nil || len(ca) != n {
		t.Fatalf("ClaimTx A: %d, %v", len(ca), err)
	}
	ctxB, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	txB, err := s.Begin(ctxB)
	if err != nil {
		t.Fatal(err)
	}
	defer txB.Rollback()
	cb, err := s.ClaimTx(ctxB, txB, params(b))
	if err != nil || len(cb) != n {
		t.Fatalf("ClaimTx B while A is open: %d, %v; want %d without waiting", len(cb), err, n)
	}
	seen := map[uuid.UUID]bool{}
	for _, c := range append(ca, cb...) {
		if seen[c.ID] {
			t.Fatalf("item %s taken by both open claims", c.ID)
		}
		seen[c.ID] = true
	}
	if err := txB.Commit(); err != nil {
		t.Fatalf("commit B: %v", err)
	}
	if err := txA.Commit(); err != nil {
		if d.Classify(err) != dialect.Retryable {
			t.Fatalf("commit A: %v, want success or a retryable error", err)
		}
		t.Logf("commit A after B: %v (retryable); claiming again", err)
		ca, err = s.Claim(ctx, params(a))
		if err != nil || len(ca) != n {
			t.Fatalf("A's claim run again: %d, %v", len(ca), err)
		}
	}
	counts, err := s.Counts(ctx, "open")
	if err != nil || counts[core.StateClaimed] != 2*n {
		t.Fatalf("counts %v, %v; want %d claimed", counts, err, 2*n)
	}
}

// TestSerializable_ConcurrentReapersReleaseOnce has 8 reapers release the
// same orphaned claims in small passes at once: each crash is counted
// once, however many reapers read it.
func TestSerializable_ConcurrentReapersReleaseOnce(t *testing.T) {
	dsn := serializableDSN(t)
	d := newCounting(postgresCompatible(lockTableFor(t, dsn)))
	db := conformance.Opener(DriverName, dsn)(t)
	s := serializableStore(t, d, db)
	ctx := t.Context()
	const owners, perOwner, reapers = 4, 50, 8
	specs := make([]core.ItemSpec, owners*perOwner)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: "orphans"}
	}
	if _, err := s.Enqueue(ctx, specs...); err != nil {
		t.Fatal(err)
	}
	for range owners {
		o, err := s.RegisterOwner(ctx, core.OwnerParams{})
		if err != nil {
			t.Fatal(err)
		}
		if cs, err := s.Claim(ctx, core.ClaimParams{Queue: "orphans", Owner: o, Limit: perOwner, Lease: time.Hour}); err != nil || len(cs) != perOwner {
			t.Fatalf("Claim: %d, %v", len(cs), err)
		}
	}
	// An hour later every owner is stale.
	later, err := core.Open(ctx, db, d, core.Options{Prefix: s.Prefix(), ClockOffset: 2 * time.Hour,
		Retry: core.RetryPolicy{MaxAttempts: 100, MaxDelay: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	var crashed atomic.Int64
	var wg sync.WaitGroup
	for i := range reapers {
		wg.Go(func() {
			for {
				r, err := later.Reap(ctx, core.ReapParams{StaleAfter: time.Hour, Limit: 7})
				if err != nil {
					t.Errorf("reaper %d: %v", i, err)
					return
				}
				crashed.Add(int64(r.Crashed))
				if r.Crashed == 0 && r.OwnersRemoved == 0 {
					return
				}
			}
		})
	}
	wg.Wait()
	for { // what the racing reapers left, if each stopped after losing a race
		r, err := later.Reap(ctx, core.ReapParams{StaleAfter: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if r.Crashed == 0 {
			break
		}
		crashed.Add(int64(r.Crashed))
	}
	if got := crashed.Load(); got != owners*perOwner {
		t.Errorf("%d reapers counted %d crashes, want %d: a claim was released twice, or not at all", reapers, got, owners*perOwner)
	}
	counts, err := s.Counts(ctx, "orphans")
	if err != nil || counts[core.StateAvailable] != owners*perOwner {
		t.Errorf("counts %v, %v; want all %d available again", counts, err, owners*perOwner)
	}
	total, byCode := d.counts()
	t.Logf("%d orphaned claims, %d reapers at SERIALIZABLE: %d transactions retried (%s), store retries %d", owners*perOwner, reapers, total, byCode, later.Stats().Retries)
}
