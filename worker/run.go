package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/fault"
)

// run is one handler run on one claim.
type run struct {
	w *Worker
	// claim is the run's claim, in the slice its claim returned (a claim
	// is a few hundred bytes: the runs of a claim share that slice rather
	// than each copying one).
	claim    *core.Claim
	ctx      context.Context
	cancel   context.CancelCauseFunc
	deadline time.Time
	// deadlines holds ctx's deadline, shared with the claim's other runs.
	deadlines *deadlines
	result    json.RawMessage
	// h is the kind's handler, nil if none is registered.
	h *handler
	// slots are the run's queue's; slotFreed is set once the flight that
	// completed the item freed its slot (the run then must not).
	slots     *slots
	slotFreed bool
	// left is set once the run stopped counting as on its way to the
	// completer (flow.begun): it handed its completion over, or took
	// another outcome.
	left bool
	// fenced is set once Job.Fence completed the item, or Job.Settle
	// settled it (settled).
	fenced, settled bool
	// within is the run's deadline on the database clock, counted from
	// the claim: the kind's Timeout less the margin, as deadline is on
	// the host's. The claims Job hands out carry it (core.Claim.Within).
	within time.Duration
	// late is set once the database refused a Job.Fence or Job.Settle
	// past within: the run is a timeout, whatever the host's clock says.
	late bool
	// started is when the run's goroutine began (UnixNano; 0 before),
	// for the watcher.
	started atomic.Int64
	// outcome is set by Job.Succeed, Retry, Dead or Snooze, and takes
	// the place of the handler's returned error.
	outcome atomic.Pointer[outcome]
	// timeout is the run's Timeout (the kind's, or its item's), backoff
	// its item's Backoff (nil: the kind's).
	timeout time.Duration
	backoff func(attempt int) time.Duration
	// metadata holds the metadata of the claim's items, read for the
	// middleware that asked for it (Middleware.Metadata); nil otherwise.
	metadata map[uuid.UUID]core.Metadata
	// ownMeta is Job.Metadata's read where metadata is nil.
	ownMeta jobMeta
	// progress holds the handler's progress reports (Job.SetProgress)
	// until they are written.
	progress progress
	// completion is what the run hands the completer (Worker.complete),
	// held here so that the handover allocates nothing.
	completion completion
}

// slots counts a queue's running handlers.
type slots struct {
	max     int
	running atomic.Int64
	// landing counts the runs whose completion the completer holds: their
	// slots free when its flight lands.
	landing atomic.Int64
	freed   chan struct{} // one pending wake-up at most
}

func (s *slots) release() {
	s.running.Add(-1)
	s.wake()
}

// wake tells the claim loop that slots freed.
func (s *slots) wake() {
	select {
	case s.freed <- struct{}{}:
	default:
	}
}

// gatherDelay is how long a full queue waits, once a slot frees, for
// others to free before it claims.
const gatherDelay = 2 * time.Millisecond

// landWait bounds how long a queue with free slots waits for the slots of
// runs whose completions are landing before it claims. A claim split in
// two (say one batch's completion in two flights) otherwise stays split:
// each part is claimed, run and completed on its own, and every batch
// after it costs two claims and two completions. Only a queue whose slots
// all fit in one completion batch waits: its best cycle is one claim and
// one completion for every slot. A larger queue's completions go in
// several flights whatever it does, and waiting for all of them would
// leave its free slots idle behind the slowest.
const landWait = 50 * time.Millisecond

// claimLoop claims queue's items in batches sized to its free slots and
// starts a handler on each, until claiming stops.
func (w *Worker) claimLoop(queue string, q QueueConfig) {
	defer w.loops.Done()
	sl := &slots{max: q.MaxWorkers, freed: make(chan struct{}, 1)}
	batch := newBatching(q, w.cfg, w.landWait)
	poll, gather := time.NewTimer(time.Hour), time.NewTimer(time.Hour)
	defer poll.Stop()
	defer gather.Stop()
	wake, unsubscribe := w.subscribe(queue)
	defer unsubscribe()
	var waiting time.Time // since when the loop waits for free slots
	woken := false        // a wake-up came while too few slots were free
	var flow flowState
	held := flow.onHeld // one closure for every claim
	for {
		select {
		case <-w.claimStop:
			return
		default:
		}
		free := sl.max - int(sl.running.Load())
		var waited time.Duration
		if !waiting.IsZero() {
			waited = time.Since(waiting)
		}
		if wait, upTo := batch.waitBeforeClaim(free, sl.landing.Load(), woken, waited); wait {
			if waiting.IsZero() {
				waiting = time.Now()
			}
			woke, ok := w.awaitSlots(sl, wake, poll, gather, upTo)
			if !ok {
				return
			}
			woken = woken || woke
			continue
		}
		waiting, woken = time.Time{}, false
		// The deadline counts from before the claim: the lease began no
		// earlier than this, on the database's clock.
		requested := time.Now()
		cs, err := w.claim(w.claims, core.ClaimParams{Queue: queue, Owner: w.owner, Limit: free, Lease: w.lease, MaxAttempts: w.limits, Held: held})
		if errors.Is(err, core.ErrOwnerLost) {
			w.lose(err)
			return
		}
		if err != nil && w.claims.Err() == nil {
			w.log.Warn("plenum/worker: claim", "queue", queue, "err", err)
		}
		w.claimed(w.base, queue, &flow, cs, err)
		w.handOut(queue, sl, cs, requested)
		if err == nil && len(cs) == free {
			continue // there may be more
		}
		// A slot of a queue with flow keys that frees may be room under
		// a key's concurrency limit: its items are then claimable, with
		// no wake-up to say so.
		var freed <-chan struct{}
		if flow.keyed {
			freed = sl.freed
		}
		poll.Reset(w.pollWait(queue, &flow, requested))
		select {
		case <-w.claimStop:
			return
		case <-poll.C:
		case <-wake:
			poll.Stop()
		case <-freed:
			poll.Stop()
		}
	}
}

// subscribe returns the store's wake-ups for queue, and the function
// that ends them; nil (never ready) when polling only. The claim loop
// subscribes before its first claim, so that an item committed after a
// claim found none still wakes it.
func (w *Worker) subscribe(queue string) (wake <-chan struct{}, unsubscribe func()) {
	if w.cfg.PollOnly {
		return nil, func() {}
	}
	sub, err := w.store.Subscribe(queue)
	if err != nil {
		w.log.Warn("plenum/worker: wake-ups: polling only", "queue", queue, "err", err)
		return nil, func() {}
	}
	return sub.C, sub.Close
}

// awaitSlots waits, as the claim loop decided (batching.waitBeforeClaim),
// for a slot to free, for a wake-up, or for upTo to pass unless it is
// zero. It reports whether a wake-up came, and ok false once claiming
// stops.
func (w *Worker) awaitSlots(sl *slots, wake <-chan struct{}, poll, gather *time.Timer, upTo time.Duration) (woke, ok bool) {
	var timeout <-chan time.Time
	if upTo > 0 {
		poll.Reset(upTo)
		timeout = poll.C
	}
	select {
	case <-w.claimStop:
		return false, false
	case <-timeout:
	case <-wake:
		// Items wait: claim what is free rather than wait for a batch's
		// worth of slots.
		woke = true
	case <-sl.freed:
		// Slots free in bursts (a batch of completions commits at once):
		// let the burst land, unless every slot is free already.
		if sl.running.Load() > 0 {
			gather.Reset(gatherDelay)
			select {
			case <-w.claimStop:
				return false, false
			case <-gather.C:
			}
		}
	}
	if !poll.Stop() {
		select {
		case <-poll.C:
		default:
		}
	}
	return woke, true
}

// handOut starts a handler on each item of a claim requested at
// requested.
func (w *Worker) handOut(queue string, sl *slots, cs []core.Claim, requested time.Time) {
	if len(cs) == 0 {
		return
	}
	w.flow.begun.Add(int64(len(cs)))
	sl.running.Add(int64(len(cs)))
	w.handlersRun.Add(len(cs))
	var batched map[*handler][]*run
	metadata := w.readMetadata(cs)
	for _, r := range w.begin(cs, sl, newDeadlines(w.base, requested, len(cs))) {
		r.metadata = metadata
		w.event(w.base, Event{Kind: EventClaimed, Queue: queue, Item: r.claim.Item})
		if r.h == nil || r.h.batch == nil {
			if r.h != nil {
				// Here rather than on the run's goroutine: an event is
				// large, and reporting it there grew each run's stack.
				w.event(r.ctx, Event{Kind: EventStarted, Queue: queue, Item: r.claim.Item})
			}
			go w.execute(queue, r)
			continue
		}
		// A batch's outcomes are its own transaction, not the
		// completer's: the completer must not wait for them.
		w.leave(r)
		if batched == nil {
			batched = map[*handler][]*run{}
		}
		batched[r.h] = append(batched[r.h], r)
	}
	for h, runs := range batched {
		h.batch.in <- runs
	}
}

// begin sets up the runs of one claim, each with its context, and
// records them as running, under one lock.
func (w *Worker) begin(cs []core.Claim, sl *slots, dl *deadlines) []*run {
	runs := make([]run, len(cs))
	out := make([]*run, len(cs))
	w.mu.Lock()
	defer w.mu.Unlock()
	for i := range cs {
		c := &cs[i]
		timeout := w.cfg.DefaultKind.Timeout
		var backoff func(int) time.Duration
		h := w.handlers[c.Kind]
		if h != nil {
			timeout = h.cfg.Timeout
			if h.cfg.ForItem != nil {
				ic := h.cfg.ForItem(c.Item)
				if ic.Timeout > 0 {
					timeout = min(timeout, ic.Timeout)
				}
				backoff = ic.Backoff
			}
		}
		r := &runs[i]
		within := timeout - w.cfg.margin(timeout)
		*r = run{w: w, claim: c, h: h, slots: sl, deadline: dl.requested.Add(within), within: within, deadlines: dl,
			timeout: timeout, backoff: backoff}
		r.ctx, r.cancel = context.WithCancelCause(dl.context(r.deadline))
		w.running[c.ID] = r
		if w.killed != nil {
			r.cancel(w.killed)
		}
		out[i] = r
	}
	return out
}

// deadlines shares the deadline contexts of one claim's runs: the runs
// of a claim that have the same deadline (the same kind's timeout,
// counted from the same request) end by one timer, not one each.
type deadlines struct {
	base      context.Context
	requested time.Time
	// byDeadline is used by the claim loop only, while it begins the
	// claim's runs; left by each run as it finishes.
	byDeadline map[time.Time]context.Context
	stops      []context.CancelFunc
	left       atomic.Int64
}

func newDeadlines(base context.Context, requested time.Time, runs int) *deadlines {
	dl := &deadlines{base: base, requested: requested, byDeadline: map[time.Time]context.Context{}}
	dl.left.Store(int64(runs))
	return dl
}

// context returns the shared context that ends at deadline.
func (dl *deadlines) context(deadline time.Time) context.Context {
	if ctx, ok := dl.byDeadline[deadline]; ok {
		return ctx
	}
	ctx, stop := context.WithDeadlineCause(dl.base, deadline, ErrDeadline)
	dl.byDeadline[deadline] = ctx
	dl.stops = append(dl.stops, stop)
	return ctx
}

// done records that one run finished; the last one stops the timers.
func (dl *deadlines) done() {
	if dl.left.Add(-1) == 0 {
		for _, stop := range dl.stops {
			stop()
		}
	}
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
	r.deadlines.done()
	return cause
}

// execute runs the handler on r's item, records the outcome, and frees
// the run's slot (unless the flight that completed it did).
func (w *Worker) execute(queue string, r *run) {
	h := r.h
	var err error
	start := time.Now()
	r.started.Store(start.UnixNano())
	if h == nil {
		err = fmt.Errorf("no handler registered for kind %q", r.claim.Kind)
	} else if err = fault.Hit(r.ctx, fault.AfterClaim); err == nil {
		w.flow.inHandler.Add(1)
		err = call(h, r)
		w.flow.inHandler.Add(-1)
		if o := r.outcome.Load(); o != nil {
			err = o.err
		}
	}
	took := time.Since(start)
	w.flushProgress(r)
	cause := w.finish(r)
	if r.late || cause == nil && time.Now().After(r.deadline) {
		cause = ErrDeadline
	}
	if err == nil && cause == nil && !r.fenced && !r.settled {
		// The common case: the completer's flight bounds the store call,
		// reports the outcome and ends the run, so that this goroutine
		// ends now rather than wait for the flight, and has not grown
		// its stack for the outcome's report.
		var handed bool
		if handed, err = w.completeAndEnd(r, took); handed {
			return
		}
		w.record(w.base, &Event{Queue: queue, Item: r.claim.Item, Duration: took}, EventCompleted, nil, err)
	} else {
		w.settle(queue, h, r, err, cause, took)
	}
	w.leave(r)
	if !r.slotFreed {
		r.slots.release()
	}
	w.handlersRun.Done()
}

// leave stops counting r as on its way to the completer, once: before a
// store call of another outcome, so that the completer does not wait
// for it.
func (w *Worker) leave(r *run) {
	if !r.left {
		r.left = true
		w.flow.begun.Add(-1)
	}
}

// call runs the handler, turning a panic into a *PanicError.
func call(h *handler, r *run) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &PanicError{Value: p, Stack: debug.Stack()}
		}
	}()
	if mw := r.w.middleware; mw != nil {
		return mw(r.ctx, newCall(h, []*run{r}))
	}
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
		timeout := r.timeout
		switch {
		case err != nil:
			err = fmt.Errorf("%w (timeout %v): %w", ErrDeadline, timeout, err)
		case r.late:
			err = fmt.Errorf("%w (timeout %v): the handler's fence came too late", ErrDeadline, timeout)
		default:
			err = fmt.Errorf("%w (timeout %v): the handler returned too late", ErrDeadline, timeout)
		}
	case (errors.Is(cause, ErrStopped) || errors.Is(cause, ErrLost)) && err != nil:
		// Cut short by the shutdown: give it back unused.
		w.leave(r)
		if errors.Is(cause, ErrLost) {
			var cancelLost context.CancelFunc
			ctx, cancelLost = w.lostBound(ctx)
			defer cancelLost()
		}
		w.record(ctx, &ev, EventReleased, nil, w.store.Release(ctx, *r.claim, 0))
		return
	}
	if err == nil {
		w.record(ctx, &ev, EventCompleted, nil, w.complete(ctx, r))
		return
	}
	var snooze *SnoozeError
	w.leave(r) // not a completion from here on
	if errors.As(err, &snooze) {
		w.record(ctx, &ev, EventSnoozed, nil, w.store.Release(ctx, *r.claim, snooze.After))
		return
	}
	dead, ferr := w.store.Fail(ctx, *r.claim, failParams(h, r, err))
	kind := EventFailed
	if dead {
		kind = EventDead
	}
	w.record(ctx, &ev, kind, err, ferr)
}

// failParams describe r's failed attempt, whose handler (h, nil if none)
// returned err: dead at once for a Discard or the kind's last attempt,
// else after the item's or the kind's backoff, if either has one.
func failParams(h *handler, r *run, err error) core.FailParams {
	p := core.FailParams{Error: err.Error()}
	var discard *discardError
	if errors.As(err, &discard) {
		p.Discard = true
	}
	if h != nil {
		if h.cfg.MaxAttempts > 0 && r.claim.Attempt >= h.cfg.MaxAttempts {
			p.Discard = true
		}
		backoff := h.cfg.Backoff
		if r.backoff != nil {
			backoff = r.backoff
		}
		if backoff != nil && !p.Discard {
			p.RetryIn = min(max(0, backoff(r.claim.Attempt)), core.MaxDelay)
		}
	}
	return p
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
