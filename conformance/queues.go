package conformance

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// Paused queues: once PauseQueue commits, no store claims the queue's
// items, whatever its clock, and other queues are untouched; ResumeQueue
// gives them back. Pausing and resuming while others claim is safe: every
// item is claimed once, and a claim begun after a pause committed takes
// nothing.
func testPausedQueue(e *env) {
	const queue, other = "paused", "unpaused"
	e.enqueue(e.s, core.ItemSpec{Queue: queue}, core.ItemSpec{Queue: queue}, core.ItemSpec{Queue: other})
	a := e.owner(e.s)
	if err := e.s.PauseQueue(e.ctx, queue); err != nil {
		e.t.Fatalf("PauseQueue: %v", err)
	}
	if err := e.s.PauseQueue(e.ctx, queue); err != nil {
		e.t.Fatalf("PauseQueue again: %v", err)
	}
	// Another process (its own store, a clock an hour on) sees it too.
	elsewhere := e.at(time.Hour)
	for _, s := range []*core.Store{e.s, elsewhere} {
		if cs := e.claim(s, a, queue, 10); len(cs) != 0 {
			e.t.Fatalf("claimed %d items of a paused queue", len(cs))
		}
	}
	e.claimOne(elsewhere, a, other)
	qs, err := elsewhere.Queues(e.ctx)
	if err != nil || len(qs) != 1 || qs[0].Name != queue || !qs[0].Paused {
		e.t.Fatalf("Queues = %+v, %v; want %q paused", qs, err, queue)
	}
	if now := e.now(e.s); qs[0].UpdatedAt.Before(now.Add(-time.Minute)) || qs[0].UpdatedAt.After(now.Add(e.clockSlack())) {
		e.t.Errorf("paused at %v, not on the database clock (now %v)", qs[0].UpdatedAt, now)
	}
	if err := e.s.ResumeQueue(e.ctx, "never-paused"); err != nil {
		e.t.Fatalf("ResumeQueue of a queue never paused: %v", err)
	}
	if err := elsewhere.ResumeQueue(e.ctx, queue); err != nil {
		e.t.Fatalf("ResumeQueue: %v", err)
	}
	if qs, err := e.s.Queues(e.ctx); err != nil || len(qs) != 1 || qs[0].Paused {
		e.t.Fatalf("Queues after ResumeQueue = %+v, %v; want %q not paused", qs, err, queue)
	}
	e.claimAll(e.s, a, queue, 2)

	// Pause and resume while claimers drain the queue.
	const contended = "paused-contended"
	n := e.scaled(300, 60)
	specs := make([]core.ItemSpec, n)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: contended}
	}
	e.enqueue(e.s, specs...)
	var (
		mu      sync.Mutex
		seen    = map[uuid.UUID]int{}
		stop    atomic.Bool
		wg      sync.WaitGroup
		toggles int
	)
	for range 4 {
		s := e.open(core.Options{})
		wg.Go(func() {
			for !stop.Load() {
				cs, err := s.Claim(e.ctx, core.ClaimParams{Queue: contended, Owner: a, Limit: 7, Lease: time.Hour})
				if err != nil {
					e.t.Errorf("Claim: %v", err)
					return
				}
				mu.Lock()
				for _, c := range cs {
					seen[c.ID]++
				}
				done := len(seen) == n
				mu.Unlock()
				if done {
					return
				}
			}
		})
	}
	pauser, checker := e.open(core.Options{}), e.open(core.Options{})
	pause := func() bool {
		if err := pauser.PauseQueue(e.ctx, contended); err != nil {
			e.t.Errorf("PauseQueue: %v", err)
			return false
		}
		toggles++
		return true
	}
	// Paused before the claimers start, so that they meet at least one
	// pause however fast they drain the queue.
	if !pause() {
		return
	}
	wg.Go(func() {
		defer stop.Store(true)
		deadline := time.Now().Add(subtestTimeout / 2)
		for time.Now().Before(deadline) {
			// Only this goroutine resumes: the queue stays paused
			// until it does, so a claim begun now takes nothing.
			cs, err := checker.Claim(e.ctx, core.ClaimParams{Queue: contended, Owner: a, Limit: n, Lease: time.Hour})
			if err != nil || len(cs) != 0 {
				e.t.Errorf("Claim after PauseQueue committed = %d items, %v; want none", len(cs), err)
				return
			}
			if err := pauser.ResumeQueue(e.ctx, contended); err != nil {
				e.t.Errorf("ResumeQueue: %v", err)
				return
			}
			time.Sleep(time.Millisecond) // let the claimers in
			mu.Lock()
			done := len(seen) == n
			mu.Unlock()
			if done || !pause() {
				return
			}
		}
		e.t.Errorf("the queue was not drained in time")
	})
	wg.Wait()
	if e.t.Failed() {
		return
	}
	e.t.Logf("%d items claimed once each over %d pauses", n, toggles)
	for id, k := range seen {
		if k != 1 {
			e.t.Errorf("item %s claimed %d times", id, k)
		}
	}
	if len(seen) != n || toggles == 0 {
		e.t.Errorf("claimed %d of %d items over %d pauses", len(seen), n, toggles)
	}
}
