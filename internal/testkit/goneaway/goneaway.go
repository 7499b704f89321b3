// Package goneaway checks what the store does when its database connection
// is killed in the middle of an operation (the server restarted, an
// administrator or a proxy ended the session): a clear error, no panic, no
// partial write, and the store working again once the pool reconnects. It
// serves the server dialects' own tests, which say how to name and kill a
// session on their database.
package goneaway

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/fault"
	"github.com/plenumdb/plenum/migrations"
)

// Config names the database and how to kill one of its sessions.
type Config struct {
	Dialect dialect.Dialect
	// Open opens a new handle on the database.
	Open func(t testing.TB) *sql.DB
	// SessionID is a query returning the current session's id.
	SessionID string
	// Kill ends the session id from another connection, and returns once
	// the server has ended it.
	Kill func(ctx context.Context, db *sql.DB, id int64) error
}

// env is one subtest's tables, and the single connection whose session
// the test kills.
type env struct {
	t      *testing.T
	ctx    context.Context
	cfg    Config
	db     *sql.DB // the store's: one connection at a time
	killer *sql.DB
	store  *core.Store
	names  migrations.Names
}

// Run runs the subtests: a completion whose session dies between the
// items' update and their barrier's count, a fence whose session dies
// just before its commit, and core.Open whose session dies before it reads
// the schema version.
func Run(t *testing.T, cfg Config) {
	t.Run("OpenSessionKilledBeforeVersionRead", func(t *testing.T) {
		t.Parallel()
		openKilled(newEnv(t, cfg))
	})
	t.Run("CompletionSessionKilledBeforeArrival", func(t *testing.T) {
		t.Parallel()
		completionKilled(newEnv(t, cfg))
	})
	t.Run("FenceSessionKilledBeforeCommit", func(t *testing.T) {
		t.Parallel()
		fenceKilled(newEnv(t, cfg))
	})
}

func newEnv(t *testing.T, cfg Config) *env {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	e := &env{t: t, ctx: ctx, cfg: cfg, db: cfg.Open(t), killer: cfg.Open(t)}
	prefix := fmt.Sprintf("pg%08x_", rand.Uint32())
	e.names = migrations.NamesFor(prefix)
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := migrations.Drop(cctx, e.killer, cfg.Dialect, prefix); err != nil {
			t.Errorf("drop %s*: %v", prefix, err)
		}
	})
	s, err := core.Open(ctx, e.db, cfg.Dialect, core.Options{Prefix: prefix, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	e.store = s
	// One connection from now on: the session read before an operation
	// is the one the operation runs on.
	e.db.SetMaxOpenConns(1)
	return e
}

// killAt returns a context under which point kills the store's session,
// once.
func (e *env) killAt(point fault.Point) context.Context {
	var id int64
	if err := e.db.QueryRowContext(e.ctx, e.cfg.SessionID).Scan(&id); err != nil {
		e.t.Fatalf("%s: %v", e.cfg.SessionID, err)
	}
	return fault.With(e.ctx, point, fault.Rule{Action: fault.Call, Times: 1, Func: func(ctx context.Context) error {
		return e.cfg.Kill(ctx, e.killer, id)
	}})
}

// call runs fn, turning a panic into a failure of the test.
func (e *env) call(what string, fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			e.t.Fatalf("%s panicked when its session was killed: %v", what, p)
		}
	}()
	return fn()
}

func (e *env) claim(queue string, n int) []core.Claim {
	e.t.Helper()
	owner, err := e.store.RegisterOwner(e.ctx, core.RegisterOwnerParams{Host: "goneaway"})
	if err != nil {
		e.t.Fatal(err)
	}
	cs, err := e.store.Claim(e.ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: n, Lease: time.Hour})
	if err != nil || len(cs) != n {
		e.t.Fatalf("Claim(%s): %d, %v; want %d", queue, len(cs), err, n)
	}
	return cs
}

func (e *env) count(q string) int64 {
	e.t.Helper()
	var n int64
	if err := e.killer.QueryRowContext(e.ctx, q).Scan(&n); err != nil {
		e.t.Fatalf("%s: %v", q, err)
	}
	return n
}

// The session dies inside CompleteMany, after the children's update and
// before their arrival: an error (or, if the dialect retries on a new
// session, a clean success), and either way never one half.
func completionKilled(e *env) {
	if _, err := e.store.Enqueue(e.ctx, core.ItemSpec{Queue: "parent"}); err != nil {
		e.t.Fatal(err)
	}
	parent := e.claim("parent", 1)[0]
	r, err := e.store.Expand(e.ctx, parent, core.ExpandParams{
		Barrier: core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "join"}},
		Next: func(context.Context, string) (core.ChildPage, error) {
			return core.ChildPage{Children: []core.ChildSpec{{Key: "a", Queue: "kids"}, {Key: "b", Queue: "kids"}}, Next: "end", Done: true}, nil
		},
		CompleteParent: true,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	kids := e.claim("kids", 2)
	done := []core.Completion{{Claim: kids[0]}, {Claim: kids[1]}}
	ctx := e.killAt(fault.CompleteBeforeArrival)
	err = e.call("CompleteMany", func() error { _, err := e.store.CompleteMany(ctx, done); return err })
	if fault.Fired(fault.CompleteBeforeArrival) == 0 {
		e.t.Fatal("the kill never ran")
	}
	b, gerr := e.store.GetBarrier(e.ctx, r.Barrier.ID)
	if gerr != nil {
		e.t.Fatal(gerr)
	}
	completed := e.count("SELECT COUNT(*) FROM " + e.names.Items + " WHERE queue = 'kids' AND state = 'completed'")
	if err != nil {
		e.t.Logf("CompleteMany on a killed session: %v", err)
		if errors.Is(err, core.ErrClaimLost) || errors.Is(err, core.ErrInvalidInput) {
			e.t.Errorf("the error %v blames the caller, want a database error", err)
		}
		if completed != 0 || b.Arrived != 0 || b.Fired() {
			e.t.Fatalf("after the failed completion: %d children completed, barrier arrived %d, fired %v; want nothing written", completed, b.Arrived, b.Fired())
		}
		if _, err := e.store.CompleteMany(e.ctx, done); err != nil {
			e.t.Fatalf("CompleteMany once the pool reconnected: %v", err)
		}
	} else {
		e.t.Log("CompleteMany on a killed session was retried on a new one")
	}
	b, err = e.store.GetBarrier(e.ctx, r.Barrier.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	joins := e.count("SELECT COUNT(*) FROM " + e.names.Items + " WHERE queue = 'join'")
	if b.Arrived != 2 || !b.Fired() || joins != 1 {
		e.t.Errorf("in the end: barrier arrived %d, fired %v, %d joins; want 2, fired, one join", b.Arrived, b.Fired(), joins)
	}
}

// The session dies in a fence after its function and before the commit:
// ErrCommitUnknown (the outcome is not known to the store), nothing
// committed, and the fence run again commits once.
func fenceKilled(e *env) {
	if _, err := e.store.Enqueue(e.ctx, core.ItemSpec{Queue: "q"}); err != nil {
		e.t.Fatal(err)
	}
	c := e.claim("q", 1)[0]
	var out uuid.UUID
	fn := func(ctx context.Context, f *core.Fenced) error {
		x, err := f.Enqueue(ctx, core.ItemSpec{Queue: "effects"})
		if err != nil {
			return err
		}
		out = x[0].ID
		return f.Complete(ctx, nil)
	}
	ctx := e.killAt(fault.FenceBeforeCommit)
	runs := 0
	err := e.call("Fence", func() error {
		_, err := e.store.Fence(ctx, c, func(ctx context.Context, f *core.Fenced) error { runs++; return fn(ctx, f) })
		return err
	})
	if !errors.Is(err, core.ErrCommitUnknown) || runs != 1 {
		e.t.Fatalf("Fence whose session died before its commit = %v after %d runs, want ErrCommitUnknown after one", err, runs)
	}
	e.t.Logf("Fence on a killed session: %v", err)
	it, err := e.store.Get(e.ctx, c.ID)
	if err != nil || it.State != core.StateClaimed {
		e.t.Fatalf("after the lost commit: %s, %v; want still claimed", it.State, err)
	}
	if n := e.count("SELECT COUNT(*) FROM " + e.names.Items + " WHERE queue = 'effects'"); n != 0 {
		e.t.Fatalf("after the lost commit %d effects, want 0", n)
	}
	if held, err := e.store.Fence(e.ctx, c, fn); !held || err != nil {
		e.t.Fatalf("Fence again = held %v, %v", held, err)
	}
	if n := e.count("SELECT COUNT(*) FROM " + e.names.Items + " WHERE queue = 'effects'"); n != 1 || out == uuid.Nil {
		e.t.Errorf("after the fence ran again %d effects, want 1", n)
	}
}

// The session dies inside core.Open, after its connection check and
// before it reads the schema version on that same session: the read is
// retried on a new session, as every read outside a transaction is, and
// the store opens.
func openKilled(e *env) {
	ctx := e.killAt(fault.OpenBeforeVersion)
	err := e.call("Open", func() error {
		_, err := core.Open(ctx, e.db, e.cfg.Dialect, core.Options{Prefix: e.store.Prefix()})
		return err
	})
	if fault.Fired(fault.OpenBeforeVersion) == 0 {
		e.t.Fatal("the kill never ran")
	}
	if err != nil {
		e.t.Errorf("Open on a killed session: %v, want the version read retried on a new session", err)
	}
}
