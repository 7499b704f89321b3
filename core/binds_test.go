package core_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/sqlite"
)

// bindCounter is a database/sql driver over SQLite's that counts, for
// every statement it runs, the '?' outside quotes against the arguments
// given, and records every statement whose counts differ.
type bindCounter struct {
	driver.Driver
	mu     sync.Mutex
	wrong  []string
	issued int
}

func (b *bindCounter) check(query string, n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.issued++
	if got := core.CountBinds(query); got != n {
		b.wrong = append(b.wrong, fmt.Sprintf("%d '?' for %d arguments: %s", got, n, query))
	}
}

func (b *bindCounter) Open(name string) (driver.Conn, error) {
	c, err := b.Driver.Open(name)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, b: b}, nil
}

type countingConn struct {
	driver.Conn
	b *bindCounter
}

func (c *countingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	c.b.check(query, len(args))
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
}

func (c *countingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	c.b.check(query, len(args))
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
}

func (c *countingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c *countingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return nil, errors.New("bind counter: statements are not prepared")
}

func (c *countingConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

var registerCounter = sync.OnceValue(func() *bindCounter {
	db, _ := sql.Open(sqlite.DriverName, "")
	b := &bindCounter{Driver: db.Driver()}
	db.Close()
	sql.Register("plenum-bind-counter", b)
	return b
})

// noReturning is SQLite without UPDATE ... RETURNING, for the core's
// other completion path.
type noReturning struct{ dialect.Dialect }

func (n noReturning) Capabilities() dialect.Capabilities {
	c := n.Dialect.Capabilities()
	c.ReturningUpdate = false
	return c
}

// TestStatements_BindsMatchArguments runs every operation of the store,
// on both completion paths, through a driver that counts each statement's
// '?' against its arguments. With the placeholders showing their binds
// (TestExpansions_ShowEveryBind), a statement as written in the core has
// exactly as many '?' as it is given arguments.
func TestStatements_BindsMatchArguments(t *testing.T) {
	b := registerCounter()
	for _, d := range []dialect.Dialect{sqlite.Dialect(), noReturning{sqlite.Dialect()}} {
		t.Run(fmt.Sprintf("ReturningUpdate=%v", d.Capabilities().ReturningUpdate), func(t *testing.T) {
			dsn, err := sqlite.DSN(filepath.Join(t.TempDir(), "binds.db"))
			if err != nil {
				t.Fatal(err)
			}
			db, err := sql.Open("plenum-bind-counter", dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			workload(t, db, d)
			workloadMore(t, db, d)
			workloadRuns(t, db, d)
			workloadBrowse(t, db, d)
		})
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.issued < 100 {
		t.Fatalf("only %d statements went through the counter", b.issued)
	}
	for _, w := range b.wrong {
		t.Error(w)
	}
	t.Logf("%d statements counted", b.issued)
}

// workload calls every operation of the store once or more.
func workload(t *testing.T, db *sql.DB, d dialect.Dialect) {
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	s, err := core.Open(ctx, db, d, core.Options{Migrate: true})
	must(err)
	later, err := core.Open(ctx, db, d, core.Options{ClockOffset: 2 * time.Hour})
	must(err)
	_, err = s.Now(ctx)
	must(err)
	owner, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{})
	must(err)
	first, err := s.Enqueue(ctx, core.ItemSpec{Queue: "q", Key: "a", Payload: json.RawMessage(`{"a":1}`)}, core.ItemSpec{Queue: "q", Delay: time.Minute}, core.ItemSpec{Queue: "q"})
	must(err)
	_, err = s.Enqueue(ctx, core.ItemSpec{Queue: "q", Key: "a"})
	must(err)
	tx, err := s.Begin(ctx)
	must(err)
	_, err = s.EnqueueTx(ctx, tx, core.ItemSpec{Queue: "q", Payload: json.RawMessage(`[1]`)}, core.ItemSpec{Queue: "q"}, core.ItemSpec{Queue: "q"})
	must(err)
	must(tx.Commit())
	claim := func(st *core.Store, queue string, n int) []core.Claim {
		t.Helper()
		cs, err := st.Claim(ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: n, Lease: time.Minute})
		must(err)
		return cs
	}
	cs := claim(s, "q", 5)
	if len(cs) != 5 {
		t.Fatalf("claimed %d, want 5", len(cs))
	}
	_, err = s.CompleteMany(ctx, []core.Completion{{Claim: cs[0], Result: json.RawMessage(`1`)}, {Claim: cs[1], Result: json.RawMessage(`2`)}})
	must(err)
	must(s.Complete(ctx, cs[0], json.RawMessage(`1`))) // again: already completed
	must(s.Extend(ctx, cs[2], time.Minute))
	_, err = s.ExtendMany(ctx, cs[2:4], time.Minute)
	must(err)
	_, err = s.Lost(ctx, cs)
	must(err)
	must(s.Heartbeat(ctx, owner))
	_, err = s.Fail(ctx, cs[2], core.FailParams{Error: "retry"})
	must(err)
	must(s.Release(ctx, cs[3], time.Second))
	_, err = s.Fail(ctx, cs[4], core.FailParams{Error: "dead", Discard: true})
	must(err)
	must(s.Revive(ctx, cs[4].ID))
	must(s.Cancel(ctx, first[1].ID)) // the delayed one, not claimed
	_, err = s.Get(ctx, cs[0].ID)
	must(err)
	_, err = s.Counts(ctx, "")
	must(err)
	_, err = s.Counts(ctx, "q")
	must(err)

	// Fan-out and fan-in, nested, with a dead join under FailBarrier.
	_, err = s.Enqueue(ctx, core.ItemSpec{Queue: "p"})
	must(err)
	pc := claim(s, "p", 1)[0]
	r, err := s.Expand(ctx, pc, core.ExpandParams{
		Barrier: core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "j", Payload: json.RawMessage(`{}`)}, OnChildFailure: core.FailBarrier},
		Next: func(_ context.Context, cursor string) (core.ChildPage, error) {
			if cursor == "" {
				return core.ChildPage{Children: []core.ChildSpec{{Key: "c1", Queue: "c"}, {Key: "c2", Queue: "c", Delay: time.Second}}, Next: "1"}, nil
			}
			return core.ChildPage{Children: []core.ChildSpec{{Key: "c3", Queue: "c"}}, Next: "2", Done: true}, nil
		},
		CompleteParent: true,
	})
	must(err)
	_, err = s.UnfiredBarriers(ctx, core.UnfiredBarriersParams{OlderThan: time.Second})
	must(err)
	kids := claim(later, "c", 3)
	held, err := later.Fence(ctx, kids[0], func(ctx context.Context, f *core.Fenced) error {
		sub, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: "sub", Join: core.JoinSpec{Queue: "j2"}})
		if err != nil {
			return err
		}
		if _, err := f.AddChildren(ctx, core.AddChildrenParams{Barrier: sub.ID, To: "x", Children: []core.ChildSpec{{Key: "g", Queue: "g"}}}); err != nil {
			return err
		}
		if _, err := f.Seal(ctx, sub.ID); err != nil {
			return err
		}
		if _, err := f.Enqueue(ctx, core.ItemSpec{Queue: "side"}); err != nil {
			return err
		}
		return f.Complete(ctx, json.RawMessage(`"ok"`))
	})
	if !held {
		t.Fatal("fence not held")
	}
	must(err)
	_, err = later.Fail(ctx, kids[1], core.FailParams{Discard: true})
	must(err)
	// The third child times out on a live owner, then crashes with it.
	claim(s, "g", 1)
	reaper, err := core.Open(ctx, db, d, core.Options{ClockOffset: 4 * time.Hour})
	must(err)
	must(later.Heartbeat(ctx, owner))
	_, err = reaper.Reap(ctx, core.ReapParams{StaleAfter: 10 * time.Hour})
	must(err)
	_, err = reaper.Reap(ctx, core.ReapParams{StaleAfter: time.Minute, MaxCrashes: 1})
	must(err)
	_, err = s.GetBarrier(ctx, r.Barrier.ID)
	must(err)
	_, err = s.Children(ctx, core.ChildrenParams{Barrier: r.Barrier.ID, Limit: 10})
	must(err)
	_, err = s.Attempts(ctx, kids[2].ID)
	must(err)
	_, err = reaper.Purge(ctx, core.PurgeParams{OlderThan: time.Hour})
	must(err)
	// Periodic work: a schedule's first sight, then the watermark's
	// compare-and-set with the ticks' items (reaper's clock is ahead).
	sched := []core.ScheduleSpec{
		{Name: "every", Every: time.Minute, MaxCatchUp: 3, Item: core.ItemSpec{Queue: "tick", Payload: json.RawMessage(`{}`)}},
		{Name: "cron", Cron: "*/5 * * * *", Item: core.ItemSpec{Queue: "tick"}},
	}
	_, err = s.EnqueueDue(ctx, sched...)
	must(err)
	ticks, err := reaper.EnqueueDue(ctx, sched...)
	must(err)
	if len(ticks) != 4 {
		t.Errorf("EnqueueDue 4 h ahead: %d ticks, want 4", len(ticks))
	}
	must(s.PauseQueue(ctx, "q"))
	must(s.PauseQueue(ctx, "q"))
	owner, err = s.RegisterOwner(ctx, core.RegisterOwnerParams{}) // the last reaped the first
	must(err)
	claim(s, "q", 1)
	must(s.ResumeQueue(ctx, "q"))
	_, err = s.Queues(ctx)
	must(err)
	must(s.Deregister(ctx, owner))
}
