package conformance

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// Retention: Purge deletes finished items and fired barriers older than
// its age, in passes of at most its limit, and never what a barrier still
// needs: the children of a barrier that has not fired, or whose join has
// not finished, stay whatever their age.
func testPurge(e *env) {
	const queue = "purge"
	a := e.owner(e.s)
	// Finished now: completed, dead, cancelled; and one of each that is not
	// finished.
	done := e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	e.complete(e.s, e.claimOne(e.s, a, queue), "")
	dead := e.enqueueOne(e.s, core.ItemSpec{Queue: queue, MaxAttempts: 1})
	if _, err := e.s.Fail(e.ctx, e.claimOne(e.s, a, queue), core.FailParams{Error: "x"}); err != nil {
		e.t.Fatal(err)
	}
	cancelled := e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	if err := e.s.Cancel(e.ctx, cancelled); err != nil {
		e.t.Fatal(err)
	}
	claimed := e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	e.claimOne(e.s, a, queue)
	waiting := e.enqueueOne(e.s, core.ItemSpec{Queue: queue})

	// A fan-in that fired, whose join still waits; and one not fired, with
	// one of its two children finished.
	e.enqueueOne(e.s, core.ItemSpec{Queue: "purge-parent"})
	fired := e.fanOut(e.s, e.claimOne(e.s, a, "purge-parent"), core.BarrierSpec{Name: "fired", Join: core.JoinSpec{Queue: "purge-join"}},
		kids("purge-kids", "f", 2))
	for range 2 {
		e.complete(e.s, e.claimOne(e.s, a, "purge-kids"), `{"kid":true}`)
	}
	e.enqueueOne(e.s, core.ItemSpec{Queue: "purge-parent"})
	open := e.fanOut(e.s, e.claimOne(e.s, a, "purge-parent"), core.BarrierSpec{Name: "open", Join: core.JoinSpec{Queue: "purge-join2"}},
		kids("purge-kids2", "o", 2))
	e.complete(e.s, e.claimOne(e.s, a, "purge-kids2"), "")

	// An hour is not old enough for anything.
	if r, err := e.at(30*time.Minute).Purge(e.ctx, core.PurgeParams{OlderThan: time.Hour}); err != nil || r != (core.PurgeResult{}) {
		e.t.Fatalf("Purge of nothing old enough = %+v, %v; want nothing", r, err)
	}
	later := e.at(2 * time.Hour)
	r, err := later.Purge(e.ctx, core.PurgeParams{OlderThan: time.Hour})
	if err != nil {
		e.t.Fatalf("Purge: %v", err)
	}
	// done, dead, cancelled, and the two parents (completed at the seal,
	// members of no barrier); no barrier: the join of one waits, the other
	// has not fired.
	if r != (core.PurgeResult{Items: 5}) {
		e.t.Errorf("Purge = %+v; want 5 items (3 finished, 2 parents) and no barrier", r)
	}
	for _, id := range []uuid.UUID{done, dead, cancelled} {
		if _, err := e.s.Get(e.ctx, id); !errors.Is(err, core.ErrNotFound) {
			e.t.Errorf("finished item %s after Purge: %v, want ErrNotFound", id, err)
		}
	}
	for _, id := range []uuid.UUID{claimed, waiting} {
		e.get(id)
	}
	if got := len(e.children(fired.ID)); got != 2 {
		e.t.Errorf("fired barrier whose join waits: %d children kept, want 2", got)
	}
	if got := len(e.children(open.ID)); got != 2 {
		e.t.Errorf("unfired barrier: %d children kept, want 2", got)
	}

	// Once the join finishes (and is old), the barrier and its children go
	// too, a pass of at most one row of each at a time.
	e.complete(e.s, e.claimOne(e.s, a, "purge-join"), "")
	total := core.PurgeResult{}
	for pass := 0; ; pass++ {
		r, err := later.Purge(e.ctx, core.PurgeParams{OlderThan: time.Hour, Limit: 1})
		if err != nil {
			e.t.Fatalf("Purge pass %d: %v", pass, err)
		}
		if r.Items > 1 || r.Barriers > 1 {
			e.t.Fatalf("Purge pass %d with Limit 1 = %+v", pass, r)
		}
		total.Items += r.Items
		total.Barriers += r.Barriers
		if r == (core.PurgeResult{}) || pass > 10 {
			break
		}
	}
	if total != (core.PurgeResult{Items: 3, Barriers: 1}) {
		e.t.Errorf("Purge after the join finished = %+v in all; want the join, its 2 children and the barrier", total)
	}
	if _, err := e.s.GetBarrier(e.ctx, fired.ID); !errors.Is(err, core.ErrNotFound) {
		e.t.Errorf("fired barrier after Purge: %v, want ErrNotFound", err)
	}
	if got := len(e.children(open.ID)); got != 2 {
		e.t.Errorf("unfired barrier: %d children kept, want 2", got)
	}
	e.wantCounts(queue, map[core.State]int64{core.StateClaimed: 1, core.StateAvailable: 1})
	if _, err := e.s.Purge(e.ctx, core.PurgeParams{}); !errors.Is(err, core.ErrInvalidInput) {
		e.t.Errorf("Purge without an age = %v, want ErrInvalidInput", err)
	}
}

// Retention run by several processes at once: every old finished item is
// deleted once, with its history, each purger's count adds up to what is
// gone, and live items and the children of a barrier that has not fired
// stay, however many purgers race over them.
func testPurgeConcurrent(e *env) {
	const (
		queue    = "purge-race"
		n        = 600
		purgers  = 4
		passSize = 70
	)
	specs := make([]core.ItemSpec, n)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: queue, MaxAttempts: 2}
	}
	e.enqueue(e.s, specs...)
	o := e.owner(e.s)
	// Half of them carry a failed attempt in their history.
	for i, c := range e.claimAll(e.s, o, queue, n) {
		if i%2 == 0 {
			if _, err := e.s.Fail(e.ctx, c, core.FailParams{Error: "first", RetryIn: time.Millisecond}); err != nil {
				e.t.Fatalf("Fail: %v", err)
			}
			continue
		}
		e.complete(e.s, c, "")
	}
	var done []core.Completion
	for _, c := range e.claimAll(e.at(time.Minute), o, queue, n/2) {
		done = append(done, core.Completion{Claim: c})
	}
	if lost, err := e.s.CompleteMany(e.ctx, done); err != nil || len(lost) != 0 {
		e.t.Fatalf("CompleteMany = lost %v, %v", lost, err)
	}
	// Live items, and the finished child of a barrier that has not fired.
	e.enqueue(e.s, core.ItemSpec{Queue: queue + ".live"}, core.ItemSpec{Queue: queue + ".live"})
	e.claimOne(e.s, o, queue+".live")
	e.enqueueOne(e.s, core.ItemSpec{Queue: queue + ".parent"})
	open := e.fanOut(e.s, e.claimOne(e.s, o, queue+".parent"), core.BarrierSpec{Name: "open", Join: core.JoinSpec{Queue: queue + ".join"}},
		kids(queue+".kids", "k", 2))
	e.complete(e.s, e.claimOne(e.s, o, queue+".kids"), "")

	later := e.at(2 * time.Hour)
	var (
		wg      sync.WaitGroup
		deleted atomic.Int64
		errs    = make(chan error, purgers)
	)
	for range purgers {
		wg.Go(func() {
			for {
				r, err := later.Purge(e.ctx, core.PurgeParams{OlderThan: time.Hour, Limit: passSize})
				if err != nil {
					errs <- err
					return
				}
				deleted.Add(int64(r.Items))
				if r.Items == 0 {
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		e.t.Errorf("Purge: %v", err)
	}
	// The n items, and the parent (completed at the seal, a member of no
	// barrier).
	if got := deleted.Load(); got != n+1 {
		e.t.Errorf("purgers reported %d items deleted, want %d", got, n+1)
	}
	if left := e.total(queue); left != 0 {
		e.t.Errorf("%d old finished items left after the purgers", left)
	}
	if h := e.sqlCount("SELECT COUNT(*) FROM {attempts} a WHERE NOT EXISTS (SELECT 1 FROM {items} i WHERE i.id = a.item_id)"); h != 0 {
		e.t.Errorf("%d attempts outlive their items", h)
	}
	e.wantCounts(queue+".live", map[core.State]int64{core.StateClaimed: 1, core.StateAvailable: 1})
	if got := len(e.children(open.ID)); got != 2 {
		e.t.Errorf("unfired barrier: %d children kept, want 2", got)
	}
}
