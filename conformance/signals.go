package conformance

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// await runs Fenced.Await for c through s and returns its result.
func (e *env) await(s *core.Store, c core.Claim, p core.AwaitParams) core.AwaitResult {
	e.t.Helper()
	var r core.AwaitResult
	held, err := s.Fence(e.ctx, c, func(ctx context.Context, f *core.Fenced) error {
		var err error
		r, err = f.Await(ctx, p)
		return err
	})
	if err != nil || !held {
		e.t.Fatalf("Await(%s, %+v): held %v, %v", c.ID, p, held, err)
	}
	return r
}

// signal sends a signal and fails the test on error.
func (e *env) signal(run uuid.UUID, name, key, payload string) core.SignalResult {
	e.t.Helper()
	sent, err := e.s.Signal(e.ctx, core.SignalSpec{Run: run, Name: name, Key: key, Payload: rawOrNil(payload)})
	if err != nil {
		e.t.Fatalf("Signal(%s, %s, %s): %v", run, name, key, err)
	}
	return sent
}

// Signals: a signal is stored once per key and taken exactly once; one
// sent before anyone waits is kept for the first waiter; a waiter is not
// claimable until its signal comes (which wakes it at once) or its
// deadline passes (when it learns it timed out).
func testSignals(e *env) {
	setup := func(e *env, queue string, n int) (uuid.UUID, uuid.UUID) {
		e.t.Helper()
		first := make([]core.ItemSpec, n)
		for i := range first {
			first[i] = core.ItemSpec{Queue: queue}
		}
		rc, _, err := e.s.CreateRun(e.ctx, core.RunSpec{Name: "p"}, first...)
		if err != nil {
			e.t.Fatal(err)
		}
		return rc.ID, e.owner(e.s)
	}

	e.run("BeforeWaitIsKept", func(e *env) {
		run, o := setup(e, "sig-a", 2)
		if s := e.signal(run, "approve", "k1", `{"by":"ann"}`); s.Existed || s.Woken != 0 {
			e.t.Fatalf("Signal before any wait = %+v", s)
		}
		if s := e.signal(run, "approve", "k1", `{"by":"bob"}`); !s.Existed {
			e.t.Fatalf("Signal again with the key = %+v, want Existed", s)
		}
		c := e.claimOne(e.s, o, "sig-a")
		r := e.await(e.s, c, core.AwaitParams{Name: "approve", Timeout: time.Hour})
		if r.Signal == nil || !jsonEqual(r.Signal.Payload, []byte(`{"by":"ann"}`)) || r.Signal.TakenBy != c.ID {
			e.t.Fatalf("Await with a signal already sent = %+v, want ann's signal taken", r)
		}
		e.complete(e.s, c, "")
		// Taken, it is there for nobody else.
		if r := e.await(e.s, e.claimOne(e.s, o, "sig-a"), core.AwaitParams{Name: "approve"}); !r.Waiting {
			e.t.Fatalf("a second Await of a taken signal = %+v, want Waiting", r)
		}
		sigs, err := e.s.Signals(e.ctx, run)
		if err != nil || len(sigs) != 1 || sigs[0].TakenBy != c.ID || sigs[0].TakenAt.IsZero() {
			e.t.Fatalf("Signals = %+v, %v; want one, taken by %s", sigs, err, c.ID)
		}
	})

	e.run("WaiterWokenAtOnce", func(e *env) {
		run, o := setup(e, "sig-w", 1)
		sub, err := e.s.Subscribe("sig-w")
		if err != nil {
			e.t.Fatal(err)
		}
		defer sub.Close()
		c := e.claimOne(e.s, o, "sig-w")
		if r := e.await(e.s, c, core.AwaitParams{Name: "go"}); !r.Waiting {
			e.t.Fatalf("Await with no signal = %+v, want Waiting", r)
		}
		it := e.get(c.ID)
		if !it.Waiting() || it.WaitName != "go" || !it.WaitUntil.IsZero() || it.Attempt != 0 {
			e.t.Fatalf("waiting item %+v; want waiting on go, no deadline, its attempt given back", it)
		}
		if err := e.s.Complete(e.ctx, c, nil); err == nil {
			e.t.Fatal("Complete of a waiting item's old claim succeeded")
		}
		// A year on, it is still not claimable.
		if cs := e.claim(e.at(365*24*time.Hour), o, "sig-w", 1); len(cs) != 0 {
			e.t.Fatalf("a waiter with no deadline was claimable a year on: %v", cs)
		}
		select {
		case <-sub.C:
		default:
		}
		if s := e.signal(run, "go", "k", `1`); s.Woken != 1 {
			e.t.Fatalf("Signal to a waiter = %+v, want Woken 1", s)
		}
		select {
		case <-sub.C:
		case <-time.After(time.Minute):
			e.t.Fatal("Signal did not wake the waiter's queue's subscribers")
		}
		c = e.claimOne(e.s, o, "sig-w")
		if r := e.await(e.s, c, core.AwaitParams{Name: "go"}); r.Signal == nil || r.Signal.Key != "k" {
			e.t.Fatalf("Await after the signal = %+v, want the signal", r)
		}
		if it := e.get(c.ID); it.WaitName != "" || it.Waiting() {
			e.t.Fatalf("item after taking its signal still waits: %+v", it)
		}
	})

	e.run("TimeoutThenClaimable", func(e *env) {
		_, o := setup(e, "sig-t", 1)
		c := e.claimOne(e.s, o, "sig-t")
		if r := e.await(e.s, c, core.AwaitParams{Name: "go", Timeout: time.Hour}); !r.Waiting {
			e.t.Fatalf("Await = %+v, want Waiting", r)
		}
		if cs := e.claim(e.at(30*time.Minute), o, "sig-t", 1); len(cs) != 0 {
			e.t.Fatalf("a waiter was claimable before its deadline: %v", cs)
		}
		later := e.at(2 * time.Hour)
		c = e.claimOne(later, o, "sig-t")
		// Asking again with another timeout keeps the first deadline.
		if r := e.await(later, c, core.AwaitParams{Name: "go", Timeout: 24 * time.Hour}); !r.TimedOut {
			e.t.Fatalf("Await after the deadline = %+v, want TimedOut", r)
		}
	})

	e.run("TakenOnceUnderConcurrency", func(e *env) {
		const waiters = 6
		run, o := setup(e, "sig-c", waiters)
		cs := e.claimAll(e.s, o, "sig-c", waiters)
		for _, c := range cs[:waiters/2] {
			if r := e.await(e.s, c, core.AwaitParams{Name: "go"}); !r.Waiting {
				e.t.Fatalf("Await = %+v", r)
			}
		}
		// Two signals race the other waiters' Awaits.
		var wg sync.WaitGroup
		var mu sync.Mutex
		taken := map[uuid.UUID]uuid.UUID{}
		for i, c := range cs[waiters/2:] {
			wg.Go(func() {
				var r core.AwaitResult
				held, err := e.s.Fence(e.ctx, c, func(ctx context.Context, f *core.Fenced) error {
					var err error
					r, err = f.Await(ctx, core.AwaitParams{Name: "go"})
					return err
				})
				if err != nil || !held {
					e.t.Errorf("Await %d: %v, %v", i, held, err)
				}
				if r.Signal != nil {
					mu.Lock()
					taken[r.Signal.ID] = c.ID
					mu.Unlock()
				}
			})
		}
		for i := range 2 {
			wg.Go(func() {
				if _, err := e.s.Signal(e.ctx, core.SignalSpec{Run: run, Name: "go", Key: string(rune('a' + i)), Payload: json.RawMessage(`1`)}); err != nil {
					e.t.Errorf("Signal: %v", err)
				}
			})
		}
		wg.Wait()
		// Every waiter, woken or not, asks again until both signals are
		// taken; no signal is taken twice, and none is lost.
		for round := 0; len(taken) < 2 && round < 10; round++ {
			for _, c := range e.claim(e.s, o, "sig-c", waiters) {
				r := e.await(e.s, c, core.AwaitParams{Name: "go"})
				if r.Signal != nil {
					if prev, ok := taken[r.Signal.ID]; ok {
						e.t.Fatalf("signal %s taken by %s and again by %s", r.Signal.ID, prev, c.ID)
					}
					taken[r.Signal.ID] = c.ID
				}
			}
		}
		sigs, err := e.s.Signals(e.ctx, run)
		if err != nil || len(sigs) != 2 || len(taken) != 2 {
			e.t.Fatalf("signals %+v (%v), taken %v; want 2, each taken once", sigs, err, taken)
		}
		for _, sg := range sigs {
			if taken[sg.ID] != sg.TakenBy {
				e.t.Errorf("signal %s stored as taken by %s, handed to %s", sg.ID, sg.TakenBy, taken[sg.ID])
			}
		}
	})
}
