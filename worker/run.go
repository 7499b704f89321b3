package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/plenumdb/plenum/core"
)

// run is one handler run on one claim.
type run struct {
	w        *Worker
	claim    core.Claim
	ctx      context.Context
	cancel   context.CancelCauseFunc
	deadline time.Time
	result   json.RawMessage
	// fenced is set once Job.Fence completed the item, or Job.Settle
	// settled it (settled).
	fenced, settled bool
}

// slots counts a queue's running handlers.
type slots struct {
	max     int
	running atomic.Int64
	freed   chan struct{} // one pending wake-up at most
}

func (s *slots) release() {
	s.running.Add(-1)
	select {
	case s.freed <- struct{}{}:
	default:
	}
}

// gatherDelay is how long a full queue waits, once a slot frees, for
// others to free before it claims.
const gatherDelay = 2 * time.Millisecond

// completeLinger bounds how long the completer gathers completions for a
// batch; completeGap is the pause after which it stops gathering.
const (
	completeLinger = 5 * time.Millisecond
	completeGap    = 300 * time.Microsecond
)

// claimLoop claims queue's items in batches sized to its free slots and
// starts a handler on each, until claiming stops.
func (w *Worker) claimLoop(queue string, q QueueConfig) {
	defer w.loops.Done()
	sl := &slots{max: q.MaxWorkers, freed: make(chan struct{}, 1)}
	poll, gather := time.NewTimer(time.Hour), time.NewTimer(time.Hour)
	defer poll.Stop()
	defer gather.Stop()
	threshold := max(1, sl.max/4)
	var waiting time.Time // since when the loop waits for free slots
	// wake receives the store's wake-ups for the queue; nil (never ready)
	// when polling only. Subscribed before the first claim, so that an
	// item committed after a claim found none still wakes the loop.
	var wake <-chan struct{}
	if !w.cfg.PollOnly {
		sub, err := w.store.Subscribe(queue)
		if err != nil {
			w.log.Warn("plenum/worker: wake-ups: polling only", "queue", queue, "err", err)
		} else {
			defer sub.Close()
			wake = sub.C
		}
	}
	woken := false // a wake-up came while too few slots were free
	for {
		select {
		case <-w.claimStop:
			return
		default:
		}
		free := sl.max - int(sl.running.Load())
		// Claim in batches: with fewer than a quarter of the slots free,
		// wait for more (up to a poll interval) before claiming what is
		// free; with none free, wait for one.
		if free <= 0 || (free < threshold && !woken && (waiting.IsZero() || time.Since(waiting) < w.cfg.PollInterval)) {
			if waiting.IsZero() {
				waiting = time.Now()
			}
			var timeout <-chan time.Time
			if free > 0 {
				poll.Reset(w.cfg.PollInterval - time.Since(waiting))
				timeout = poll.C
			}
			select {
			case <-w.claimStop:
				return
			case <-timeout:
			case <-wake:
				// Items wait: claim what is free rather than wait
				// for a batch's worth of slots.
				woken = true
			case <-sl.freed:
				// Slots free in bursts (a batch of completions commits
				// at once): let the burst land.
				gather.Reset(gatherDelay)
				select {
				case <-w.claimStop:
					return
				case <-gather.C:
				}
			}
			if !poll.Stop() {
				select {
				case <-poll.C:
				default:
				}
			}
			continue
		}
		waiting, woken = time.Time{}, false
		// The deadline counts from before the claim: the lease began no
		// earlier than this, on the database's clock.
		requested := time.Now()
		cs, err := w.store.Claim(w.base, core.ClaimParams{Queue: queue, Owner: w.owner, Limit: free, Lease: w.lease})
		if errors.Is(err, core.ErrOwnerLost) {
			w.lose(err)
			return
		}
		if err != nil && w.base.Err() == nil {
			w.log.Warn("plenum/worker: claim", "queue", queue, "err", err)
		}
		for _, c := range cs {
			w.event(w.base, Event{Kind: EventClaimed, Queue: queue, Item: c.Item})
			sl.running.Add(1)
			w.handlersRun.Add(1)
			r := w.begin(c, requested)
			go func() {
				defer w.handlersRun.Done()
				defer sl.release()
				w.execute(queue, r)
			}()
		}
		if err == nil && len(cs) == free {
			continue // there may be more
		}
		poll.Reset(w.cfg.PollInterval)
		select {
		case <-w.claimStop:
			return
		case <-poll.C:
		case <-wake:
			poll.Stop()
		}
	}
}

// begin sets up a run's context and records it as running.
func (w *Worker) begin(c core.Claim, requested time.Time) *run {
	timeout := w.cfg.DefaultKind.Timeout
	w.mu.Lock()
	defer w.mu.Unlock()
	if h := w.handlers[c.Kind]; h != nil {
		timeout = h.cfg.Timeout
	}
	r := &run{w: w, claim: c, deadline: requested.Add(timeout - w.cfg.margin(timeout))}
	ctx, cancel := context.WithCancelCause(w.base)
	ctx, stop := context.WithDeadlineCause(ctx, r.deadline, ErrDeadline)
	r.ctx = ctx
	r.cancel = func(cause error) {
		cancel(cause)
		if cause == nil {
			stop()
		}
	}
	w.running[c.ID] = r
	if w.killed != nil {
		cancel(w.killed)
	}
	return r
}

// finish removes r from the running set and returns why its context
// ended, if it did: after this, nothing cancels it any more.
func (w *Worker) finish(r *run) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.running, r.claim.ID)
	var cause error
	if r.ctx.Err() != nil {
		cause = context.Cause(r.ctx)
	}
	r.cancel(nil)
	return cause
}

// execute runs the handler on r's item and records the outcome.
func (w *Worker) execute(queue string, r *run) {
	w.mu.Lock()
	h := w.handlers[r.claim.Kind]
	w.mu.Unlock()
	var err error
	start := time.Now()
	if h == nil {
		err = fmt.Errorf("no handler registered for kind %q", r.claim.Kind)
	} else {
		w.event(r.ctx, Event{Kind: EventStarted, Queue: queue, Item: r.claim.Item})
		err = call(h, r)
	}
	took := time.Since(start)
	cause := w.finish(r)
	if cause == nil && time.Now().After(r.deadline) {
		cause = ErrDeadline
	}
	w.settle(queue, h, r, err, cause, took)
}

// call runs the handler, turning a panic into a *PanicError.
func call(h *handler, r *run) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &PanicError{Value: p, Stack: debug.Stack()}
		}
	}()
	return h.call(r.ctx, r)
}

// outcomeTimeout bounds each store call that records an outcome.
const outcomeTimeout = 30 * time.Second

// settle records the outcome of a handler that returned err, whose
// context ended with cause (nil if it did not).
func (w *Worker) settle(queue string, h *handler, r *run, err, cause error, took time.Duration) {
	ev := Event{Queue: queue, Item: r.claim.Item, Duration: took}
	ctx, cancel := context.WithTimeout(w.base, outcomeTimeout)
	defer cancel()
	switch {
	case r.settled:
		// Its handler settled it: nothing to record or report.
		return
	case r.fenced:
		// Completed in its fence, whatever the handler did after.
		ev.Kind = EventCompleted
		w.event(ctx, ev)
		return
	case errors.Is(cause, ErrCancelled):
		ev.Kind = EventLost
		w.event(ctx, ev)
		return
	case errors.Is(cause, ErrDeadline):
		// Too late: the result is refused, the attempt counts.
		timeout := w.cfg.DefaultKind.Timeout
		if h != nil {
			timeout = h.cfg.Timeout
		}
		if err != nil {
			err = fmt.Errorf("%w (timeout %v): %w", ErrDeadline, timeout, err)
		} else {
			err = fmt.Errorf("%w (timeout %v): the handler returned too late", ErrDeadline, timeout)
		}
	case (errors.Is(cause, ErrStopped) || errors.Is(cause, ErrLost)) && err != nil:
		// Cut short by the shutdown: give it back unused.
		w.record(ctx, &ev, EventReleased, nil, w.store.Release(ctx, r.claim, 0))
		return
	}
	if err == nil {
		w.record(ctx, &ev, EventCompleted, nil, w.complete(ctx, r))
		return
	}
	var snooze *SnoozeError
	if errors.As(err, &snooze) {
		w.record(ctx, &ev, EventSnoozed, nil, w.store.Release(ctx, r.claim, snooze.After))
		return
	}
	p := core.FailParams{Error: err.Error()}
	var discard *discardError
	if errors.As(err, &discard) {
		p.Discard = true
	}
	if h != nil {
		if h.cfg.MaxAttempts > 0 && r.claim.Attempt >= h.cfg.MaxAttempts {
			p.Discard = true
		}
		if h.cfg.Backoff != nil && !p.Discard {
			p.RetryIn = min(max(0, h.cfg.Backoff(r.claim.Attempt)), core.MaxDelay)
		}
	}
	dead, ferr := w.store.Fail(ctx, r.claim, p)
	kind := EventFailed
	if dead {
		kind = EventDead
	}
	w.record(ctx, &ev, kind, err, ferr)
}

// record reports the outcome kind, or a lost claim, or logs why it could
// not be recorded (the lease then runs out, and a reaper takes the item).
func (w *Worker) record(ctx context.Context, ev *Event, kind EventKind, herr, err error) {
	switch {
	case err == nil:
		ev.Kind, ev.Err = kind, herr
	case errors.Is(err, core.ErrClaimLost):
		ev.Kind = EventLost
	default:
		w.log.Error("plenum/worker: record outcome", "item", ev.Item.ID, "outcome", kind, "err", err)
		return
	}
	if ev.Kind == EventFailed || ev.Kind == EventDead {
		w.log.Warn("plenum/worker: attempt failed", "item", ev.Item.ID, "kind", ev.Item.Kind, "attempt", ev.Item.Attempt, "dead", ev.Kind == EventDead, "err", herr)
	}
	w.event(ctx, *ev)
}

// completion is one item for the completer to complete.
type completion struct {
	c    core.Completion
	done chan error
}

// complete hands r's completion to the completer and waits for it to
// commit (nil) or be refused (core.ErrClaimLost).
func (w *Worker) complete(ctx context.Context, r *run) error {
	c := &completion{c: core.Completion{Claim: r.claim, Result: r.result}, done: make(chan error, 1)}
	w.completions <- c
	return <-c.done
}

// completer completes in batches: whatever completions are waiting when
// one arrives, up to CompleteBatch, go in one CompleteMany.
func (w *Worker) completer() {
	defer close(w.completed)
	batch := make([]*completion, 0, w.cfg.CompleteBatch)
	linger := time.NewTimer(time.Hour)
	defer linger.Stop()
	for first := range w.completions {
		batch = append(batch[:0], first)
		// Handlers that finish together complete together: gather what
		// keeps arriving (gaps under completeGap), for at most
		// completeLinger, up to a full batch.
		until := time.Now().Add(completeLinger)
	drain:
		for len(batch) < w.cfg.CompleteBatch {
			linger.Reset(min(completeGap, time.Until(until)))
			select {
			case c, ok := <-w.completions:
				if !ok {
					break drain
				}
				batch = append(batch, c)
			case <-linger.C:
				break drain
			}
		}
		if !linger.Stop() {
			select {
			case <-linger.C:
			default:
			}
		}
		cs := make([]core.Completion, len(batch))
		for i, c := range batch {
			cs[i] = c.c
		}
		ctx, cancel := context.WithTimeout(w.base, outcomeTimeout)
		lost, err := w.store.CompleteMany(ctx, cs)
		cancel()
		gone := map[[16]byte]bool{}
		for _, id := range lost {
			gone[id] = true
		}
		for _, c := range batch {
			switch {
			case err != nil:
				c.done <- err
			case gone[c.c.Claim.ID]:
				c.done <- fmt.Errorf("plenum/worker: complete %s: %w", c.c.Claim.ID, core.ErrClaimLost)
			default:
				c.done <- nil
			}
		}
	}
}
