package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/plenumdb/plenum/core"
)

// verdict is one run's outcome in a batch: what to write (finish, if
// write) and what to report.
type verdict struct {
	r      *run
	ev     Event
	kind   EventKind
	herr   error
	write  bool
	finish core.Finish
}

// settleBatch records the outcomes of a batch whose handler returned err
// (the outcome of the runs that set none), whose context ended with
// cause (nil if it did not): every outcome to write in one FinishMany,
// then one event per item, as settle reports a single run's.
func (w *Worker) settleBatch(h *handler, runs []*run, err, cause error, took time.Duration) {
	vs := make([]verdict, len(runs))
	var fs []core.Finish
	var lost bool // the owner was lost: bound the write as settle does
	for i, r := range runs {
		own := w.finish(r)
		c := cause
		if errors.Is(own, ErrCancelled) {
			c = own
		}
		if r.late {
			c = ErrDeadline
		}
		e := err
		if o := r.outcome.Load(); o != nil {
			e = o.err
		}
		vs[i] = w.judge(h, r, e, c, took)
		if vs[i].write {
			fs = append(fs, vs[i].finish)
		}
		lost = lost || errors.Is(c, ErrLost)
	}
	ctx, cancel := context.WithTimeout(w.base, outcomeTimeout)
	defer cancel()
	if lost {
		var cancelLost context.CancelFunc
		ctx, cancelLost = w.lostBound(ctx)
		defer cancelLost()
	}
	var done []core.Finished
	var ferr error
	if len(fs) > 0 {
		done, ferr = w.store.FinishMany(ctx, fs)
	}
	j := 0
	for i := range vs {
		v := &vs[i]
		if !v.write {
			if v.kind != "" {
				v.ev.Kind = v.kind
				w.event(ctx, v.ev)
			}
			continue
		}
		kind, werr := v.kind, ferr
		if ferr == nil {
			switch {
			case done[j].Lost:
				werr = fmt.Errorf("plenum/worker: finish %s: %w", v.r.claim.ID, core.ErrClaimLost)
			case done[j].Dead:
				kind = EventDead
			}
		}
		j++
		w.record(ctx, &v.ev, kind, v.herr, werr)
	}
}

// judge decides the outcome of run r of a batch, whose handler's error
// for it is err and whose context ended with cause, as settle does for a
// single run.
func (w *Worker) judge(h *handler, r *run, err, cause error, took time.Duration) verdict {
	v := verdict{r: r, ev: Event{Queue: r.claim.Queue, Item: r.claim.Item, Duration: took}}
	switch {
	case r.settled:
		// Its handler settled it: nothing to record or report.
		return v
	case r.fenced:
		// Completed in its fence, whatever the handler did after.
		v.kind = EventCompleted
		return v
	case errors.Is(cause, ErrCancelled):
		v.kind = EventLost
		return v
	case errors.Is(cause, ErrDeadline):
		// Too late: the result is refused, the attempt counts.
		switch {
		case err != nil:
			err = fmt.Errorf("%w (batch timeout %v): %w", ErrDeadline, r.timeout, err)
		case r.late:
			err = fmt.Errorf("%w (batch timeout %v): the handler's fence came too late", ErrDeadline, r.timeout)
		default:
			err = fmt.Errorf("%w (batch timeout %v): the handler returned too late", ErrDeadline, r.timeout)
		}
	case (errors.Is(cause, ErrStopped) || errors.Is(cause, ErrLost)) && err != nil:
		// Cut short by the shutdown: give it back unused.
		v.kind, v.write = EventReleased, true
		v.finish = core.Finish{Claim: *r.claim, Outcome: core.FinishRelease}
		return v
	}
	v.write = true
	if err == nil {
		v.kind = EventCompleted
		v.finish = core.Finish{Claim: *r.claim, Result: r.result}
		return v
	}
	var snooze *SnoozeError
	if errors.As(err, &snooze) {
		v.kind = EventSnoozed
		v.finish = core.Finish{Claim: *r.claim, Outcome: core.FinishRelease, Delay: min(snooze.After, core.MaxDelay)}
		return v
	}
	v.kind, v.herr = EventFailed, err
	v.finish = core.Finish{Claim: *r.claim, Outcome: core.FinishFail, Fail: failParams(h, r, err)}
	return v
}
