package core_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/sqlite"
)

// faulty wraps a real dialect and injects failures into its transactions.
type faulty struct {
	dialect.Dialect
	// failExec makes this many statements fail with errTransient.
	failExec atomic.Int64
	// failCommit makes this many commits fail with errTransient, after
	// rolling back.
	failCommit atomic.Int64
	// lostCommit makes this many commits commit and then report a broken
	// connection.
	lostCommit atomic.Int64
	// lostRollback makes this many commits roll back and then report a
	// broken connection.
	lostRollback atomic.Int64
	// broken makes every statement fail with a non-transient error.
	broken atomic.Bool
	begins atomic.Int64
	// retryAttempts, when set, is the dialect's Capabilities.RetryAttempts.
	retryAttempts int
	// afterCommit, when set, runs after each commit that succeeded, with
	// the statements of the transaction.
	afterCommit func(statements []string)
}

func (f *faulty) Capabilities() dialect.Capabilities {
	caps := f.Dialect.Capabilities()
	if f.retryAttempts != 0 {
		caps.RetryAttempts = f.retryAttempts
	}
	return caps
}

var (
	errTransient = errors.New("injected transient error")
	errPermanent = errors.New("injected permanent error")
)

func (f *faulty) Classify(err error) dialect.ErrorClass {
	if errors.Is(err, errTransient) {
		return dialect.Retryable
	}
	return f.Dialect.Classify(err)
}

func (f *faulty) Begin(ctx context.Context, db *sql.DB, o dialect.TxOptions) (dialect.Tx, error) {
	f.begins.Add(1)
	tx, err := f.Dialect.Begin(ctx, db, o)
	if err != nil {
		return nil, err
	}
	return &faultyTx{Tx: tx, f: f}, nil
}

type faultyTx struct {
	dialect.Tx
	f          *faulty
	statements []string
}

func (t *faultyTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	if t.f.broken.Load() {
		return nil, errPermanent
	}
	if t.f.failExec.Add(-1) >= 0 {
		return nil, errTransient
	}
	t.statements = append(t.statements, q)
	return t.Tx.ExecContext(ctx, q, args...)
}

func (t *faultyTx) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if t.f.broken.Load() {
		return nil, errPermanent
	}
	if t.f.failExec.Add(-1) >= 0 {
		return nil, errTransient
	}
	t.statements = append(t.statements, q)
	return t.Tx.QueryContext(ctx, q, args...)
}

func (t *faultyTx) Commit() error {
	if t.f.failCommit.Add(-1) >= 0 {
		_ = t.Tx.Rollback()
		return errTransient
	}
	if t.f.lostRollback.Add(-1) >= 0 {
		_ = t.Tx.Rollback()
		return driver.ErrBadConn
	}
	if t.f.lostCommit.Add(-1) >= 0 {
		if err := t.Tx.Commit(); err != nil {
			return err
		}
		return driver.ErrBadConn
	}
	if err := t.Tx.Commit(); err != nil {
		return err
	}
	if t.f.afterCommit != nil {
		t.f.afterCommit(t.statements)
	}
	return nil
}

// bundle is a store through faulty, whose faults a test arms.
type bundle struct {
	opened
	f *faulty
}

func setup(t *testing.T, opts core.Options) bundle {
	t.Helper()
	f := &faulty{Dialect: sqlite.Dialect()}
	return bundle{opened: openStore(t, f, opts), f: f}
}

func claimOne(t *testing.T, b bundle, queue string) core.Claim {
	t.Helper()
	ctx := context.Background()
	if _, err := b.store.Enqueue(ctx, core.ItemSpec{Queue: queue, Kind: "k"}); err != nil {
		t.Fatal(err)
	}
	cs, err := b.store.Claim(ctx, core.ClaimParams{Queue: queue, Owner: b.owner, Limit: 1, Lease: time.Minute})
	if err != nil || len(cs) != 1 {
		t.Fatalf("claim: %v, %d items", err, len(cs))
	}
	return cs[0]
}

func TestTx_TransientErrorsAreRetried(t *testing.T) {
	t.Parallel()
	b := setup(t, core.Options{})
	c := claimOne(t, b, "q")
	b.f.failExec.Store(2)
	if err := b.store.Complete(context.Background(), c, []byte(`1`)); err != nil {
		t.Fatalf("complete after two transient errors: %v", err)
	}
	if st := b.store.Stats(); st.Retries != 2 || st.MostAttempts != 3 || st.Exhausted != 0 {
		t.Fatalf("Stats() = %+v, want 2 retries, at most 3 attempts, none exhausted", st)
	}
	it, _ := b.store.Get(context.Background(), c.ID)
	if it.State != core.StateCompleted {
		t.Fatalf("state = %s", it.State)
	}
}

func TestTx_RetryIsBounded(t *testing.T) {
	t.Parallel()
	b := setup(t, core.Options{Retry: core.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Microsecond}})
	c := claimOne(t, b, "q")
	b.f.failExec.Store(1000)
	before := b.f.begins.Load()
	err := b.store.Complete(context.Background(), c, nil)
	if !errors.Is(err, errTransient) {
		t.Fatalf("err = %v, want the transient error after the last try", err)
	}
	if tries := b.f.begins.Load() - before; tries != 3 {
		t.Fatalf("tries = %d, want 3", tries)
	}
	if st := b.store.Stats(); st.Exhausted != 1 || st.MostAttempts != 3 {
		t.Fatalf("Stats() = %+v, want 1 exhausted, at most 3 attempts", st)
	}
	b.f.failExec.Store(0)
	it, _ := b.store.Get(context.Background(), c.ID)
	if it.State != core.StateClaimed {
		t.Fatalf("state = %s, want claimed: a failed transaction changed the item", it.State)
	}
}

// TestTx_DialectSetsDefaultRetryBudget checks that a dialect's
// Capabilities.RetryAttempts is the default budget, and that
// Options.Retry.MaxAttempts overrides it.
func TestTx_DialectSetsDefaultRetryBudget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		dialect, option, want int
	}{
		{0, 0, 10},
		{25, 0, 25},
		{25, 4, 4},
	} {
		f := &faulty{Dialect: sqlite.Dialect(), retryAttempts: tc.dialect}
		s := openStore(t, f, core.Options{Retry: core.RetryPolicy{MaxAttempts: tc.option, BaseDelay: time.Microsecond, MaxDelay: time.Microsecond}}).store
		f.failExec.Store(1000)
		before := f.begins.Load()
		if _, err := s.Enqueue(context.Background(), core.ItemSpec{Queue: "q", Kind: "k"}); !errors.Is(err, errTransient) {
			t.Fatalf("err = %v, want the transient error after the last try", err)
		}
		if tries := f.begins.Load() - before; tries != int64(tc.want) {
			t.Errorf("dialect %d, option %d: %d tries, want %d", tc.dialect, tc.option, tries, tc.want)
		}
	}
}

func TestTx_OtherErrorsAreNotRetried(t *testing.T) {
	t.Parallel()
	b := setup(t, core.Options{})
	c := claimOne(t, b, "q")
	b.f.broken.Store(true)
	before := b.f.begins.Load()
	err := b.store.Complete(context.Background(), c, nil)
	if !errors.Is(err, errPermanent) {
		t.Fatalf("err = %v", err)
	}
	if tries := b.f.begins.Load() - before; tries != 1 {
		t.Fatalf("tries = %d, want 1", tries)
	}
}

func TestTx_ConnectionLostAtCommitIsCommitUnknown(t *testing.T) {
	t.Parallel()
	b := setup(t, core.Options{})
	c := claimOne(t, b, "q")
	b.f.lostCommit.Store(1)
	before := b.f.begins.Load()
	err := b.store.Complete(context.Background(), c, []byte(`"r"`))
	if !errors.Is(err, core.ErrCommitUnknown) {
		t.Fatalf("err = %v, want ErrCommitUnknown", err)
	}
	if tries := b.f.begins.Load() - before; tries != 1 {
		t.Fatalf("tries = %d: a commit with unknown outcome was retried blindly", tries)
	}
	// The caller's safe move: complete again with the same claim.
	if err := b.store.Complete(context.Background(), c, []byte(`"r"`)); err != nil {
		t.Fatalf("completing again after an unknown commit: %v", err)
	}
}

func TestFence_FnRunsAgainOnRetryAndCommitsOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, core.Options{})
	ctx := context.Background()
	c := claimOne(t, b, "q")
	b.f.failCommit.Store(1)
	calls := 0
	held, err := b.store.Fence(ctx, c, func(ctx context.Context, f *core.Fenced) error {
		calls++
		if _, err := f.Enqueue(ctx, core.ItemSpec{Queue: "side", Kind: "effect"}); err != nil {
			return err
		}
		return f.Complete(ctx, nil)
	})
	if err != nil || !held {
		t.Fatalf("fence: held=%v err=%v", held, err)
	}
	if calls != 2 {
		t.Fatalf("fn ran %d times, want 2 (once rolled back, once committed)", calls)
	}
	counts, err := b.store.Counts(ctx, "side")
	if err != nil {
		t.Fatal(err)
	}
	if counts[core.StateAvailable] != 1 {
		t.Fatalf("side effects = %v, want exactly one item", counts)
	}
}

// SQLite's migration needs no second connection: a pool of one works.
func TestOpen_MigratesOnAOneConnectionPool(t *testing.T) {
	t.Parallel()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "one.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Enqueue(ctx, core.ItemSpec{Queue: "q"}); err != nil {
		t.Fatal(err)
	}
}
