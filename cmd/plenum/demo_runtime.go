package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/plenumdb/plenum/internal/cmd/cmdline"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
)

// The demo's work runs on package worker: one worker serves the parent and
// the join, --workers workers serve the children, and every one of them
// heartbeats and reaps. Only the planned victims are not workers of the
// runtime: each is an owner that claims a batch and dies holding it, as a
// killed process would, for the runtime's reapers to find.

// demoConfig is the runtime configuration of the demo's workers.
func (r *demoRun) demoConfig(queue string, slots int) worker.Config {
	return worker.Config{
		Queues:            map[string]worker.QueueConfig{queue: {MaxWorkers: slots}},
		PollInterval:      10 * time.Millisecond,
		HeartbeatInterval: r.o.Heartbeat,
		StaleAfter:        r.o.StaleAfter,
		ReapInterval:      r.o.StaleAfter / 8,
		RetainFor:         -1, // the report reads everything afterwards
		Hooks:             worker.HookFunc(r.onEvent),
	}
}

// onEvent counts what the runtime reports.
func (r *demoRun) onEvent(_ context.Context, e worker.Event) {
	switch {
	case e.Kind == worker.EventReaped:
		r.crashed.Add(int64(e.Reap.Crashed))
		r.timedOut.Add(int64(e.Reap.TimedOut))
		r.deadLettered.Add(int64(e.Reap.DeadLettered))
		r.ownersRemoved.Add(int64(e.Reap.OwnersRemoved))
		if e.Reap.OwnersRemoved > 0 || e.Reap.Crashed > 0 || e.Reap.TimedOut > 0 {
			r.logf("reaper: %s silent for %v removed; %s released as crashes, %d timed out",
				cmdline.Plural(e.Reap.OwnersRemoved, "owner"), r.o.StaleAfter, cmdline.Plural(e.Reap.Crashed, "claim"), e.Reap.TimedOut)
		}
	case e.Queue == r.childQ:
		switch e.Kind {
		case worker.EventClaimed:
			r.claimed.Add(1)
			r.mu.Lock()
			if !r.tokens[e.Item.ClaimToken] {
				r.tokens[e.Item.ClaimToken] = true
				r.claims.Add(1)
			}
			r.mu.Unlock()
		case worker.EventCompleted:
			r.completed.Add(1)
			now := time.Now().UnixNano()
			if gap := time.Duration(now - r.lastDone.Swap(now)); gap > idleGap {
				r.idle.Add(int64(gap))
			}
		case worker.EventFailed:
			r.retries.Add(1)
		case worker.EventDead:
			r.deadFails.Add(1)
		case worker.EventLost:
			r.lost.Add(1)
		}
	case e.Queue == r.joinQ && e.Kind == worker.EventCompleted:
		r.mu.Lock()
		r.joined = true
		r.mu.Unlock()
		r.cancel() // done: stop the workers and the progress lines
	}
}

// runWorkers runs the parent-and-join worker at once, and the children's
// workers once every victim died, each restarted as a new owner if the
// reapers take it for dead, until ctx ends.
func (r *demoRun) runWorkers(ctx context.Context, parentID uuid.UUID) error {
	// Every worker below shares r.st's pool: bound it at what they need
	// together.
	cfgs := []worker.Config{r.demoConfig(r.parentQ, 1), r.demoConfig(r.joinQ, 1)}
	for range r.o.Workers {
		cfgs = append(cfgs, r.demoConfig(r.childQ, r.o.Batch))
	}
	worker.FitPool(r.st, cfgs...)
	var wg sync.WaitGroup
	errs := make(chan error, r.o.Workers+1)
	supervise := func(name, queue string, slots int, setup func(w *worker.Worker)) {
		wg.Go(func() {
			for ctx.Err() == nil {
				w, err := worker.New(r.st, r.demoConfig(queue, slots))
				if err != nil {
					errs <- err
					return
				}
				setup(w)
				if err := w.Start(ctx); err != nil {
					errs <- ignoreCancel(ctx, fmt.Errorf("demo: start %s: %w", name, err))
					return
				}
				select {
				case <-ctx.Done():
				case <-w.Done():
				}
				stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
				err = w.Stop(stop)
				cancel()
				if errors.Is(err, worker.ErrLost) && ctx.Err() == nil {
					// The reapers took this live worker for dead (its
					// heartbeat was late): what it held went back; carry
					// on as a new owner.
					r.ownersLost.Add(1)
					continue
				}
				if err != nil && ctx.Err() == nil {
					errs <- fmt.Errorf("demo: %s: %w", name, err)
				}
				return
			}
		})
	}
	supervise("the parent's worker", r.parentQ, 1, func(w *worker.Worker) {
		w.HandleFunc("fan-out", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
			return r.expand(ctx, job.Claim(), parentID)
		})
	})
	supervise("the join worker", r.joinQ, 1, func(w *worker.Worker) {
		w.HandleFunc("sum-squares", r.joinHandler)
	})
	wg.Go(func() {
		select {
		case <-r.victimsDone:
		case <-ctx.Done():
			return
		}
		for i := range r.o.Workers {
			supervise(fmt.Sprintf("worker %d", i+1), r.childQ, r.o.Batch, func(w *worker.Worker) {
				worker.Handle(w, "square", r.square, worker.KindConfig{Backoff: func(int) time.Duration { return time.Millisecond }})
			})
		}
	})
	wg.Wait()
	close(errs)
	var all error
	for err := range errs {
		all = errors.Join(all, err)
	}
	return all
}

// expand fans the parent out into the children, page by page, completing
// the parent with the last page.
func (r *demoRun) expand(ctx context.Context, c core.Claim, parentID uuid.UUID) error {
	if c.ID != parentID {
		return worker.Discard(fmt.Errorf("claimed %s from the parent queue, want the parent %s", c.ID, parentID))
	}
	res, err := r.st.Expand(ctx, c, core.ExpandParams{
		Barrier: core.BarrierSpec{
			Name: "squares",
			Join: core.JoinSpec{Queue: r.joinQ, Kind: "sum-squares"},
		},
		Next:           r.page,
		CompleteParent: true,
		Result:         fmt.Appendf(nil, `{"children":%d}`, r.o.Children),
	})
	if err != nil {
		return fmt.Errorf("demo: expand the parent: %w", err)
	}
	r.mu.Lock()
	r.barrier = res.Barrier.ID
	r.mu.Unlock()
	r.logf("parent expanded into %s children in %s, barrier sealed", cmdline.Commas(res.Inserted), cmdline.Plural(res.Batches, "transaction"))
	return nil
}

// square is the children's handler: every planned child fails its first
// attempt (retried at once), the others return their square.
func (r *demoRun) square(ctx context.Context, job *worker.Job[struct{ N *int64 }]) error {
	if job.Args.N == nil {
		return worker.Discard(fmt.Errorf("child %s has payload %s, want {\"n\": ...}", job.ID(), job.Item().Payload))
	}
	n := *job.Args.N
	if r.failsOnce(n) && job.Attempt() == 1 {
		return errors.New("demo: planned failure of the first attempt")
	}
	return job.SetResult(map[string]int64{"n": n, "square": n * n})
}

// joinHandler reads every child through the join item and records the
// check; the join completes with the sum.
func (r *demoRun) joinHandler(ctx context.Context, job *worker.Job[json.RawMessage]) error {
	r.logf("barrier fired: join item claimed, reading %s results in keyset pages", cmdline.Commas(r.o.Children))
	jc, err := r.readChildren(ctx, job.Item())
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.join = jc
	r.mu.Unlock()
	return job.SetResult(map[string]uint64{"count": uint64(jc.Seen), "sum_squares": jc.SumSquares})
}

// victim registers an owner that claims one batch of children, once the
// parent has been expanded, and dies holding it: no heartbeat, no
// completion. The runtime's reapers find it silent after StaleAfter.
func (r *demoRun) victim(ctx context.Context, n int) error {
	own, err := r.register(ctx)
	if err != nil {
		return ignoreCancel(ctx, err)
	}
	// Leave work for everyone else: together the victims hold less than
	// all of it.
	limit := min(r.o.Batch, max(1, r.o.Children/(r.o.Crashes+1)))
	for ctx.Err() == nil {
		cs, err := r.st.Claim(ctx, core.ClaimParams{Queue: r.childQ, Owner: own.id, Limit: limit, Lease: demoLease})
		if err != nil {
			return ignoreCancel(ctx, fmt.Errorf("demo: victim %d: claim: %w", n, err))
		}
		if len(cs) == 0 {
			if err := sleep(ctx, 5*time.Millisecond); err != nil {
				return nil
			}
			continue
		}
		own.crash()
		r.claims.Add(1)
		r.claimed.Add(int64(len(cs)))
		r.crashes.Add(1)
		r.abandoned.Add(int64(len(cs)))
		r.logf("worker %d crashed holding %s: no heartbeat, no completion; the reaper will find it silent after %v",
			n, cmdline.Plural(len(cs), "claim"), r.o.StaleAfter)
		if r.victimsLeft.Add(-1) == 0 {
			close(r.victimsDone)
		}
		return nil
	}
	return nil
}
