package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/plenumdb/plenum/core"
)

// SetProgress reports the job's progress: counters of the work done and
// a small partial output (core.Progress), for readers of the store
// (core.Store.Progress, the dashboard, the next step of a pipeline, the
// item's next attempt). Call it as often as the work goes: the worker
// keeps the latest report and writes it at most once per
// Config.ProgressInterval (1 s by default), each write fenced by the
// job's claim in a short transaction of its own, so that a loop that
// reports 100,000 times costs a write a second, not 100,000. The last
// report is written before the job's outcome: in the transaction of
// Fence or Settle, or just before the worker completes, fails or
// releases the item. A report out of bounds (core.ValidProgress) is
// refused here with a *core.InputError, and the reports before it stand.
//
// A write fails quietly (logged at debug level): once the claim is lost
// (the item was cancelled, or timed out and was reaped), nothing the run
// reports is written, and reports after the handler returned are
// dropped. Safe for concurrent use.
func (j *Job[T]) SetProgress(p core.Progress) error {
	if err := core.ValidProgress(p); err != nil {
		return fmt.Errorf("plenum/worker: progress of %s: %w", j.r.claim.ID, err)
	}
	p.Output = append(p.Output[:0:0], p.Output...) // the caller may reuse its buffer
	j.r.progress.report(j.r, p)
	return nil
}

// progress coalesces a run's progress reports into at most one write per
// interval, the latest report winning.
type progress struct {
	mu      sync.Mutex
	pending *core.Progress
	// last is when the last write began; timer is set while a write
	// waits for its turn; writing while one is under way (done is then
	// closed when it ends); closed once the run's outcome took the last
	// report.
	last    time.Time
	timer   *time.Timer
	writing bool
	done    chan struct{}
	closed  bool
}

// report keeps p as the run's latest report and makes sure it is written
// in its turn.
func (ps *progress) report(r *run, p core.Progress) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.closed {
		return
	}
	ps.pending = &p
	if ps.timer != nil || ps.writing {
		return // the write under way, or the one waiting, takes it
	}
	ps.schedule(r)
}

// schedule starts the next write in its turn: at once when an interval
// has passed since the last one began. ps.mu is held.
func (ps *progress) schedule(r *run) {
	wait := r.w.cfg.ProgressInterval - time.Since(ps.last)
	if ps.last.IsZero() || wait <= 0 {
		ps.begin()
		go ps.write(r)
		return
	}
	ps.timer = time.AfterFunc(wait, func() {
		ps.mu.Lock()
		defer ps.mu.Unlock()
		ps.timer = nil
		if ps.closed || ps.pending == nil {
			return
		}
		ps.begin()
		go ps.write(r)
	})
}

// begin marks a write under way. ps.mu is held.
func (ps *progress) begin() {
	ps.writing, ps.done, ps.last = true, make(chan struct{}), time.Now()
}

// write writes the latest report in a transaction of its own, fenced by
// the run's claim, and schedules the next if another came meanwhile.
func (ps *progress) write(r *run) {
	ps.mu.Lock()
	p := ps.pending
	ps.pending = nil
	ps.mu.Unlock()
	if p != nil {
		r.w.writeProgress(r, *p)
	}
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.writing = false
	close(ps.done)
	if ps.pending != nil && !ps.closed {
		ps.schedule(r)
	}
}

// take ends the run's reports: it stops the write waiting for its turn,
// waits for the one under way, and returns the report not yet written,
// if any, for the run's outcome to write.
func (ps *progress) take() *core.Progress {
	ps.mu.Lock()
	ps.closed = true
	if ps.timer != nil {
		ps.timer.Stop()
		ps.timer = nil
	}
	for ps.writing {
		done := ps.done
		ps.mu.Unlock()
		<-done
		ps.mu.Lock()
	}
	p := ps.pending
	ps.pending = nil
	ps.mu.Unlock()
	return p
}

// reopen lets the run report again, after a fence that failed took its
// last report: p, written by none, is kept as the latest.
func (ps *progress) reopen(r *run, p *core.Progress) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ps.closed = false
	if p != nil && ps.pending == nil {
		ps.pending = p
		ps.schedule(r)
	}
}

// writeProgress writes p as r's item's progress, fenced by r's claim.
func (w *Worker) writeProgress(r *run, p core.Progress) {
	ctx, cancel := context.WithTimeout(w.base, outcomeTimeout)
	defer cancel()
	held, err := w.store.SetProgress(ctx, *r.claim, p)
	switch {
	case err != nil && !errors.Is(err, context.Canceled):
		w.log.Debug("plenum/worker: progress not written", "item", r.claim.ID, "err", err)
	case !held:
		w.log.Debug("plenum/worker: progress not written: the claim was lost", "item", r.claim.ID)
	}
}

// flushProgress writes r's last report not yet written, before its
// outcome.
func (w *Worker) flushProgress(r *run) {
	if p := r.progress.take(); p != nil {
		w.writeProgress(r, *p)
	}
}
