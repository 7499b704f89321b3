package worker

import (
	"context"
	"errors"
	"runtime/debug"
	"time"
)

// DefaultMaxBatch is the most items a batch handler gets at once when its
// BatchConfig leaves MaxBatch zero.
const DefaultMaxBatch = 100

// BatchConfig is the setting of a kind handled in batches (HandleBatch).
type BatchConfig struct {
	// KindConfig holds the kind's other settings, which mean what they
	// do for a handler of one item, with these differences. Timeout is
	// the whole batch's: its context ends at the earliest deadline among
	// its items, counted from each item's claim (ForItem may shorten an
	// item's, and so the batch's). MaxAttempts and Backoff apply to each
	// item that fails.
	KindConfig
	// MaxBatch is the most items one call of the handler gets. A batch
	// holds one of its queue's slots (QueueConfig.MaxWorkers) per item,
	// so a queue with fewer slots never fills one. Default:
	// DefaultMaxBatch.
	MaxBatch int
	// MaxWait is how long the first item of a batch that is not full
	// waits for more to be claimed before the handler runs on what there
	// is. It counts against the batch's Timeout, and cannot be more than
	// a quarter of it. Default (0): none, and a batch is what one claim
	// brought of the kind, up to MaxBatch: under load, claims take as
	// many items as there are free slots, and batches grow with them.
	MaxWait time.Duration
}

// batchHandler is what a kind handled in batches adds to its handler.
type batchHandler struct {
	cfg BatchConfig
	// call runs the handler on runs, payloads decoded; a run whose
	// payload does not decode is left out, its outcome set (a Discard).
	call func(ctx context.Context, runs []*run) error
	// in takes the runs of each claim, for the gatherer.
	in chan []*run
}

// valid checks the batch's own settings, and fills their defaults, for
// the kind whose settings (defaults applied) are k.
func (b *batchHandler) valid(field string, k KindConfig) error {
	switch {
	case b.cfg.MaxBatch < 0:
		return configErr(field+".MaxBatch", "%d is negative", b.cfg.MaxBatch)
	case b.cfg.MaxWait < 0:
		return configErr(field+".MaxWait", "%v is negative", b.cfg.MaxWait)
	case b.cfg.MaxWait > k.Timeout/4:
		return configErr(field+".MaxWait", "%v is more than a quarter of the batch's Timeout (%v), which it counts against", b.cfg.MaxWait, k.Timeout)
	}
	if b.cfg.MaxBatch == 0 {
		b.cfg.MaxBatch = DefaultMaxBatch
	}
	return nil
}

// HandleBatch registers fn as the handler of kind's items in batches:
// the worker gathers up to cfg.MaxBatch claimed items of kind (waiting
// up to cfg.MaxWait for them) and calls fn once with all of them, for
// work that costs less done together (a hundred e-mails in one API
// call). Payloads are decoded from JSON into T; an item whose payload
// does not decode is dead at once, left out of jobs.
//
// Each job's outcome is its own: set it on the job (Job.Succeed,
// Job.Retry, Job.Dead, Job.Snooze); a job on which none was set takes
// the outcome of the error fn returns (nil: completed, with the result
// Job.SetResult set). Once fn returns, every outcome is written in one
// transaction (core.Store.FinishMany), each item fenced on its own
// claim, and reported to the hooks item by item; an item whose claim was
// lost meanwhile (cancelled, say) changes nothing and is reported lost.
// Job.Fence and Job.Settle work on a batch's jobs as on a single job's,
// each in a transaction of its own.
//
// The context of fn ends at the batch's deadline (see BatchConfig), when
// the worker stops (the items whose outcome is then an error go back
// unused, as a stopped handler's item does) or when it loses its owner;
// an item cancelled while fn runs is reported lost, and the others
// finish. A fn that panics fails every item whose outcome it did not
// set. Register every kind before Start, as with Handle.
func HandleBatch[T any](w *Worker, kind string, fn func(ctx context.Context, jobs []*Job[T]) error, cfg BatchConfig) {
	b := &batchHandler{cfg: cfg, in: make(chan []*run), call: func(ctx context.Context, runs []*run) error {
		jobs := make([]*Job[T], 0, len(runs))
		for _, r := range runs {
			job, err := newJob[T](r)
			if err != nil {
				r.outcome.Store(&outcome{err: err})
				continue
			}
			jobs = append(jobs, job)
		}
		if len(jobs) == 0 {
			return nil
		}
		return fn(ctx, jobs)
	}}
	w.register(kind, fn != nil, []KindConfig{cfg.KindConfig}, b, nil)
}

// HandleBatch registers fn as the handler of k's items in batches, as
// HandleBatch does.
func (k Kind[T]) HandleBatch(w *Worker, fn func(ctx context.Context, jobs []*Job[T]) error, cfg BatchConfig) {
	if cfg.Codec == nil {
		cfg.Codec = k.codec
	}
	HandleBatch(w, k.name, fn, cfg)
}

// gather makes batches of h's runs and starts each: a full batch at
// once, the rest once its first run has waited MaxWait (at once without
// one), and everything at once once the worker stops claiming. It ends
// with the worker.
func (w *Worker) gather(h *handler) {
	b := h.batch
	var pending []*run
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var due <-chan time.Time
	stopping := w.claimStop
	for {
		now := false // the runs pending go now, full or not
		select {
		case runs := <-b.in:
			if len(pending) == 0 && b.cfg.MaxWait > 0 {
				timer.Reset(b.cfg.MaxWait)
				due = timer.C
			}
			pending = append(pending, runs...)
			now = b.cfg.MaxWait == 0 || stopping == nil
		case <-due:
			now = true
		case <-stopping:
			stopping, now = nil, true
		case <-w.done:
			return
		}
		for len(pending) >= b.cfg.MaxBatch {
			go w.executeBatch(h, pending[:b.cfg.MaxBatch:b.cfg.MaxBatch])
			pending = pending[b.cfg.MaxBatch:]
		}
		if now && len(pending) > 0 {
			go w.executeBatch(h, pending)
			pending = nil
		}
		if len(pending) == 0 {
			timer.Stop()
			due = nil
		}
	}
}

// executeBatch runs h's handler once on runs, then writes every run's
// outcome in one transaction, reports each, and frees the runs' slots.
func (w *Worker) executeBatch(h *handler, runs []*run) {
	defer w.handlersRun.Add(-len(runs))
	defer func() {
		for _, r := range runs {
			if !r.slotFreed {
				r.slots.release()
			}
		}
	}()
	deadline := runs[0].deadline
	for _, r := range runs[1:] {
		if r.deadline.Before(deadline) {
			deadline = r.deadline
		}
	}
	ctx, cancel := context.WithCancelCause(w.base)
	defer cancel(nil)
	ctx, stopDeadline := context.WithDeadlineCause(ctx, deadline, ErrDeadline)
	defer stopDeadline()
	// A stop or a lost owner ends the batch; an item cancelled (or its
	// own deadline, later than the batch's) ends nothing but its item's
	// share, decided once the handler returns.
	for _, r := range runs {
		stop := context.AfterFunc(r.ctx, func() {
			if c := context.Cause(r.ctx); errors.Is(c, ErrStopped) || errors.Is(c, ErrLost) {
				cancel(c)
			}
		})
		defer stop()
	}
	start := time.Now()
	for _, r := range runs {
		r.started.Store(start.UnixNano())
		w.event(ctx, Event{Kind: EventStarted, Queue: r.claim.Queue, Item: r.claim.Item})
	}
	err := callBatch(h, ctx, runs)
	took := time.Since(start)
	for _, r := range runs {
		w.flushProgress(r)
	}
	var cause error
	if ctx.Err() != nil {
		cause = context.Cause(ctx)
	}
	if cause == nil && time.Now().After(deadline) {
		cause = ErrDeadline
	}
	w.settleBatch(h, runs, err, cause, took)
}

// callBatch runs the batch handler, turning a panic into a *PanicError.
func callBatch(h *handler, ctx context.Context, runs []*run) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &PanicError{Value: p, Stack: debug.Stack()}
		}
	}()
	if mw := runs[0].w.middleware; mw != nil {
		return mw(ctx, newCall(h, runs))
	}
	return h.batch.call(ctx, runs)
}
