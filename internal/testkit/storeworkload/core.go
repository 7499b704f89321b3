package storeworkload

import (
	"context"
	"database/sql"
	"encoding/json"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
)

// workload calls every operation of the store once or more.
func workload(t *testing.T, db *sql.DB, d dialect.Dialect) {
	ctx := context.Background()
	must := fatal(t)
	s := open(t, db, d, core.Options{Migrate: true})
	later := open(t, db, d, core.Options{ClockOffset: 2 * time.Hour})
	_, err := s.Now(ctx)
	must(err)
	owner, err := s.RegisterOwner(ctx, core.RegisterOwnerParams{})
	must(err)
	first, err := s.Enqueue(ctx, core.ItemSpec{Queue: "q", Key: "a", Payload: json.RawMessage(`{"a":1}`)}, core.ItemSpec{Queue: "q", Delay: time.Minute}, core.ItemSpec{Queue: "q"})
	must(err)
	_, err = s.Enqueue(ctx, core.ItemSpec{Queue: "q", Key: "a"})
	must(err)
	// A key held only while claimed: the available holder's key is
	// released; a key per hour reads the clock.
	_, err = s.Enqueue(ctx, core.ItemSpec{Queue: "uk", Key: "k"})
	must(err)
	if r, err := s.Enqueue(ctx, core.ItemSpec{Queue: "uk", Key: "k", KeyStates: []core.State{core.StateClaimed}}); err != nil || r[0].Existed {
		t.Fatalf("enqueue of a released key: %v, %v", r, err)
	}
	_, err = s.Enqueue(ctx, core.ItemSpec{Queue: "uk", Key: "p", KeyPeriod: time.Hour})
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
	reaper := open(t, db, d, core.Options{ClockOffset: 4 * time.Hour})
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
		{Name: "every", Every: time.Minute, MaxCatchUp: 3, Item: core.ItemSpec{Queue: "tick", Payload: json.RawMessage(`{}`)}, SkipWhile: []core.State{core.StateClaimed}},
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
