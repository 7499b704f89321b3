package worker

import (
	"context"
	"fmt"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/fault"
)

// completeLinger bounds how long the completer gathers completions for a
// batch; completeGap is the pause after which it stops gathering.
const (
	completeLinger = 5 * time.Millisecond
	completeGap    = 300 * time.Microsecond
)

// completeFlights bounds the batches being completed at once. While they
// are, the next batch keeps gathering (up to CompleteBatch), so that under
// load batches grow, and the statements per item shrink, instead of
// queueing behind one another; a second flight takes only a full batch,
// so that a backlog's commit overlaps the next statement.
const completeFlights = 2

// completion is one item for the completer to complete.
type completion struct {
	c    core.Completion
	done chan error
}

// complete hands r's completion to the completer and waits for it to
// commit (nil) or be refused (core.ErrClaimLost).
func (w *Worker) complete(ctx context.Context, r *run) error {
	if err := fault.Hit(ctx, fault.BeforeCompletion); err != nil {
		return err
	}
	c := &completion{c: core.Completion{Claim: r.claim, Result: r.result}, done: make(chan error, 1)}
	w.completions <- c
	return <-c.done
}

// completer completes in batches of up to CompleteBatch, each in one
// CompleteMany, with up to completeFlights of them at once. With no
// flight in the air a batch goes once it is full or completions stop
// arriving (a gap of completeGap, or completeLinger after its first);
// with one, it keeps gathering, and goes when that flight lands or, full,
// in a flight of its own.
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
			batch = append(batch, c)
			if len(batch) == 1 {
				first = time.Now()
			}
			gather.Reset(min(completeGap, time.Until(first.Add(completeLinger))))
		case <-gathered:
			ready = true
		case <-landed:
			flights--
		}
	}
}

// flush completes batch in one CompleteMany, answers each completion, and
// then says so on landed.
func (w *Worker) flush(batch []*completion, landed chan<- struct{}) {
	defer func() { landed <- struct{}{} }()
	cs := make([]core.Completion, len(batch))
	for i, c := range batch {
		cs[i] = c.c
	}
	ctx, cancel := context.WithTimeout(w.base, outcomeTimeout)
	lost, err := w.completeMany(ctx, cs)
	cancel()
	gone := make(map[[16]byte]bool, len(lost))
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
