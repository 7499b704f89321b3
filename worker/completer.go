package worker

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/fault"
)

// completeLinger bounds how long the completer gathers completions for a
// batch; completeGap is the pause after which it stops gathering, once
// every run still on its way is inside its handler (a slow handler is
// not waited for). Runs between their claim and their handler, or
// between their handler's return and the completer, are on their way
// with nothing but scheduling between them and the completer: the batch
// waits for them (up to completeLinger), so that a claim batch of fast
// handlers completes in one statement even when the machine is loaded
// and their goroutines run late: on 2 cores at a load average of 50, 5 ms
// still split a claim of 100 into two completions, and the claims then
// split with them.
const (
	completeLinger = 20 * time.Millisecond
	completeGap    = 300 * time.Microsecond
)

// completeFlights bounds the batches being completed at once. While they
// are, the next batch keeps gathering (up to CompleteBatch), so that under
// load batches grow, and the statements per item shrink, instead of
// queueing behind one another; a second flight takes only a full batch,
// so that a backlog's commit overlaps the next statement.
const completeFlights = 2

// completion is one item for the completer to complete. Each run holds
// its own (run.completion): handing a completion over allocates nothing.
type completion struct {
	// r is the run it completes: its claim and result are the
	// completion's, and the flight that lands frees its slot (none in the
	// completer's own tests, whose runs have no slots).
	r *run
	// answered is done once err holds the flight's answer: nil, the
	// store's error, or a lost claim.
	answered sync.WaitGroup
	err      error
	// ends is set where nobody waits for the answer: the flight ends
	// the run itself (Worker.ended), reporting the outcome of a handler
	// that ran for took.
	ends bool
	took time.Duration
}

// handing prepares c to be handed to the completer for r, for a waiter.
func (c *completion) handing(r *run) {
	c.r, c.err, c.ends = r, nil, false
	c.answered.Add(1)
}

// ending prepares c to be handed to the completer for r, whose run the
// flight ends: r's goroutine does not wait for it.
func (c *completion) ending(r *run, took time.Duration) {
	c.r, c.err, c.ends, c.took = r, nil, true, took
}

// answer gives c's waiter the flight's answer.
func (c *completion) answer(err error) {
	c.err = err
	c.answered.Done()
}

// wait returns the flight's answer, once it came.
func (c *completion) wait() error {
	c.answered.Wait()
	return c.err
}

// complete hands r's completion to the completer and waits for it to
// commit (nil) or be refused (core.ErrClaimLost).
func (w *Worker) complete(ctx context.Context, r *run) error {
	if err := fault.Hit(ctx, fault.BeforeCompletion); err != nil {
		return err
	}
	c := &r.completion
	c.handing(r)
	w.handOver(c)
	return c.wait()
}

// completeAndEnd hands r's completion to the completer, whose flight
// then reports the outcome and ends the run (Worker.ended), and returns
// at once: the run's goroutine ends with nothing left on its stack. It
// returns false, having handed nothing over, if the fault injected
// before a completion refused it; the caller then records err as the
// outcome.
func (w *Worker) completeAndEnd(r *run, took time.Duration) (handed bool, err error) {
	if err := fault.Hit(w.base, fault.BeforeCompletion); err != nil {
		return false, err
	}
	c := &r.completion
	c.ending(r, took)
	w.handOver(c)
	return true, nil
}

// handOver gives c to the completer.
func (w *Worker) handOver(c *completion) {
	c.r.left = true // the completer counts it out when it takes it
	if c.r.slots != nil {
		c.r.slots.landing.Add(1) // until the flight frees its slot
	}
	w.completions <- c
}

// completer completes in batches of up to CompleteBatch, each in one
// CompleteMany, with up to completeFlights of them at once. With no
// flight in the air a batch goes once it is full, once no run of the
// worker is on its way to an outcome, once the only runs left are in
// their handlers and completions stopped arriving for completeGap, or
// completeLinger after its first; with one, it keeps gathering, and goes
// when that flight lands or, full, in a flight of its own.
func (w *Worker) completer() {
	defer close(w.completed)
	var (
		batch   []*completion
		first   time.Time // when the batch's first completion came
		ready   bool      // the batch has gathered long enough
		flights int
		landed  = make(chan struct{})
		in      = w.completions // nil once closed
	)
	gather := time.NewTimer(time.Hour)
	gather.Stop()
	defer gather.Stop()
	for in != nil || len(batch) > 0 || flights > 0 {
		full := len(batch) >= w.cfg.CompleteBatch
		// The first flight takes whatever has gathered; a second only a
		// full batch (or the rest at shutdown): more write transactions
		// for the same items cost more than they save, unless there is
		// a backlog.
		flush := flights == 0 && (ready || full) || flights < completeFlights && (full || in == nil)
		if len(batch) > 0 && flush {
			flights++
			go w.flush(batch, landed)
			batch, ready, full = nil, false, false
			gather.Stop()
		}
		recv := in
		if full {
			recv = nil // a full batch waits for a flight before gathering more
		}
		var gathered <-chan time.Time
		if len(batch) > 0 && !ready {
			gathered = gather.C
		}
		select {
		case c, ok := <-recv:
			if !ok {
				in = nil
				continue
			}
			w.flow.begun.Add(-1)
			batch = append(batch, c)
			if len(batch) == 1 {
				first = time.Now()
			}
			if w.flow.coming() == 0 {
				ready = true // nothing else is on its way
				continue
			}
			gather.Reset(min(completeGap, time.Until(first.Add(w.linger))))
		case <-gathered:
			// A pause: the batch goes if it has lingered long enough, or
			// if the runs still to come are all in their handlers.
			left := time.Until(first.Add(w.linger))
			if left <= 0 || w.flow.onTheirWay() == 0 {
				ready = true
				continue
			}
			gather.Reset(min(completeGap, left))
		case <-landed:
			flights--
		}
	}
}

// completionBufs holds the slices flights pass CompleteMany, reused: a
// Completion holds a copy of its claim, a few hundred bytes, and a slice
// made afresh for each flight was a fifth of what the runtime allocated
// per item.
var completionBufs sync.Pool

// flush completes batch in one CompleteMany, answers each completion,
// says so on landed, and then ends the runs that do not wait for their
// answer.
func (w *Worker) flush(batch []*completion, landed chan<- struct{}) {
	buf, _ := completionBufs.Get().(*[]core.Completion)
	if buf == nil {
		buf = new([]core.Completion)
	}
	cs := (*buf)[:0]
	for _, c := range batch {
		cs = append(cs, core.Completion{Claim: *c.r.claim, Result: c.r.result})
	}
	ctx, cancel := context.WithTimeout(w.base, outcomeTimeout)
	lost, err := w.completeMany(ctx, cs)
	cancel()
	clear(cs) // the claims' payloads and results are not kept alive by it
	*buf = cs[:0]
	completionBufs.Put(buf)
	gone := make(map[[16]byte]bool, len(lost))
	for _, id := range lost {
		gone[id] = true
	}
	// The items' slots free together, before their runs hear back, so
	// that the claim loop claims the whole landed batch at once.
	for _, c := range batch {
		if c.r.slots != nil {
			c.r.slotFreed = true
			c.r.slots.landing.Add(-1)
			c.r.slots.running.Add(-1)
		}
	}
	wakeSlots(batch)
	for _, c := range batch {
		answer := err
		if err == nil && gone[c.r.claim.ID] {
			answer = fmt.Errorf("plenum/worker: complete %s: %w", c.r.claim.ID, core.ErrClaimLost)
		}
		if c.ends {
			c.err = answer
			continue
		}
		c.answer(answer)
	}
	// The next flight need not wait for the runs' hooks.
	landed <- struct{}{}
	for _, c := range batch {
		if c.ends {
			w.ended(c)
		}
	}
}

// ended reports the outcome of c's run, whose goroutine handed c over
// and left (Worker.completeAndEnd), and ends the run. Its slot is free
// already: the flight freed it.
func (w *Worker) ended(c *completion) {
	r := c.r
	ev := Event{Queue: r.claim.Queue, Item: r.claim.Item, Duration: c.took}
	w.record(w.base, &ev, EventCompleted, nil, c.err)
	w.handlersRun.Done()
}

// wakeSlots wakes the claim loop of each queue whose slots batch freed.
func wakeSlots(batch []*completion) {
	var last *slots
	for _, c := range batch {
		if c.r.slots == nil || c.r.slots == last {
			continue
		}
		last = c.r.slots
		last.wake()
	}
}

// flow counts a worker's runs on their way to an outcome, for the
// completer to tell whether more completions are coming.
type flow struct {
	// begun counts the runs begun whose outcome has not yet been handed
	// to the completer or recorded otherwise.
	begun atomic.Int64
	// inHandler counts those of them inside their handler.
	inHandler atomic.Int64
}

// coming returns how many runs may still hand the completer a
// completion (at most: a run may fail instead).
func (f *flow) coming() int64 { return max(0, f.begun.Load()) }

// onTheirWay returns how many runs may hand the completer a completion
// with no handler code left to run: claimed but not yet in their
// handler, or out of it and recording the outcome.
func (f *flow) onTheirWay() int64 {
	in := f.inHandler.Load()
	return max(0, f.begun.Load()-in)
}
