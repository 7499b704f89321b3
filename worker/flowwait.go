package worker

import (
	"context"
	"sync"
	"time"

	"github.com/plenumdb/plenum/core"
)

// The claim loop of a queue with flow keys (core.ItemSpec.FlowKey) waits
// after a short claim no longer than until the next turn of its lanes
// (core.Store.NextClaimSince): a key whose rate is spent gives its next
// item then, and polling it sooner would take nothing, while waiting a
// whole poll interval would run it slower than its limit allows.

// flowState is what a queue's claim loop knows of its flow keys.
type flowState struct {
	// keyed is set once a claim of the queue met a flow key: it claimed
	// a keyed item, or was told of a key held back. Only then does the
	// loop ask for the lanes' next turn: a queue without keys pays
	// nothing for them.
	keyed bool
	// held gathers what one claim is told of keys held back
	// (core.ClaimParams.Held), for the hooks once the claim returns.
	held []core.Held
}

// onHeld is the claim's core.ClaimParams.Held: it only records, since
// it is called before the claim returns, in its transaction. A claim run
// again after a retry tells again: the last word on a key stands.
func (f *flowState) onHeld(h core.Held) {
	for i := range f.held {
		if f.held[i].Key == h.Key {
			f.held[i] = h
			return
		}
	}
	f.held = append(f.held, h)
}

// claimed notes what a claim of the queue met, and reports the keys it
// held back to the hooks; a claim that failed reports none (it may not
// have committed).
func (w *Worker) claimed(ctx context.Context, queue string, f *flowState, cs []core.Claim, err error) {
	if err != nil {
		f.held = f.held[:0]
		return
	}
	if len(f.held) > 0 {
		f.keyed = true
		for _, h := range f.held {
			w.event(ctx, Event{Kind: EventHeld, Queue: queue, Held: h})
		}
		f.held = f.held[:0]
	}
	if !f.keyed {
		for i := range cs {
			if cs[i].FlowKey != "" {
				f.keyed = true
				break
			}
		}
	}
}

// flowLag is how long after a lane's turn the loop claims: the turn is
// on the database clock, which the host's reading of it matches to
// within a round trip, and a claim a moment early takes nothing.
const flowLag = time.Millisecond

// pollWait is how long the loop of a queue whose last claim came back
// short waits for a wake-up before it claims again: a poll interval, or
// less, until just after the next turn of the queue's lanes where that
// comes sooner. claimed is when the loop sent that claim: a turn that
// came since then counts, and makes the wait none (see
// core.Store.NextClaimSince).
func (w *Worker) pollWait(queue string, f *flowState, claimed time.Time) time.Duration {
	wait := w.cfg.PollInterval
	if !f.keyed {
		return wait
	}
	at, err := w.store.NextClaimSince(w.claims, queue, time.Since(claimed))
	if err != nil {
		if w.claims.Err() == nil {
			w.log.Warn("plenum/worker: next turn of the queue's flow keys", "queue", queue, "err", err)
		}
		return wait
	}
	if at.IsZero() {
		return wait
	}
	d, err := w.clock.until(w.claims, w.store, at, time.Since(claimed))
	if err != nil {
		if w.claims.Err() == nil {
			w.log.Warn("plenum/worker: read the database clock", "err", err)
		}
		return wait
	}
	return min(wait, max(d, 0)+flowLag)
}

// dbClock reads the database clock on the host's: the offset between
// them, measured through core.Store.Now and kept for a while.
type dbClock struct {
	mu sync.Mutex
	// offset is the database clock less the host's, measured at read
	// (zero before the first measure).
	offset time.Duration
	read   time.Time
}

// clockFresh is how long a measured offset is trusted: the host's clock
// may be stepped meanwhile.
const clockFresh = time.Minute

// until returns how long from now until at, a time on the database
// clock that was still to come within took ago (since the claim that
// came back short). An answer that puts at well in the past on the
// host's reading means the offset went stale: it is measured again.
func (c *dbClock) until(ctx context.Context, s *core.Store, at time.Time, took time.Duration) (time.Duration, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for fresh := false; ; fresh = true {
		if c.read.IsZero() || time.Since(c.read) > clockFresh {
			if err := c.measure(ctx, s); err != nil {
				return 0, err
			}
			fresh = true
		}
		d := at.Sub(time.Now().Add(c.offset))
		if d >= -(took+flowLag) || fresh {
			return d, nil
		}
		c.read = time.Time{}
	}
}

// measure reads the database clock, taking it to be the host's at the
// middle of the round trip.
func (c *dbClock) measure(ctx context.Context, s *core.Store) error {
	before := time.Now()
	now, err := s.Now(ctx)
	if err != nil {
		return err
	}
	after := time.Now()
	c.offset = now.Sub(before.Add(after.Sub(before) / 2))
	c.read = after
	return nil
}
