package worker

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/plenumdb/plenum/core"
)

// heartbeat tells the store the worker is alive every HeartbeatInterval.
// It counts the worker lost, and stops it, on core.ErrOwnerLost or when no
// heartbeat has succeeded for StaleAfter minus two intervals: by then a
// reaper may be about to count it dead, and its claims go to others.
func (w *Worker) heartbeat(registered time.Time) {
	defer w.background.Done()
	limit := w.cfg.StaleAfter - 2*w.cfg.HeartbeatInterval
	last := registered // when the last successful heartbeat was sent
	t := time.NewTicker(w.cfg.HeartbeatInterval)
	defer t.Stop()
	for {
		select {
		case <-w.bg.Done():
			return
		case <-t.C:
		}
		sent := time.Now()
		ctx, cancel := context.WithTimeout(w.bg, max(limit-sent.Sub(last), time.Millisecond))
		err := w.store.Heartbeat(ctx, w.owner)
		cancel()
		switch {
		case err == nil:
			last = sent
		case errors.Is(err, core.ErrOwnerLost):
			w.lose(err)
			return
		case w.bg.Err() != nil:
			return
		default:
			w.log.Warn("plenum/worker: heartbeat", "owner", w.owner, "err", err)
		}
		if since := time.Since(last); since >= limit {
			w.lose(fmt.Errorf("no heartbeat succeeded for %v (stale after %v)", since.Round(time.Millisecond), w.cfg.StaleAfter))
			return
		}
	}
}

// watch cancels, every PollInterval, the handlers whose item was cancelled
// or whose claim was otherwise lost, in whichever process cancelled it.
// It asks only about the runs that began a whole interval ago or more:
// most runs of a busy queue are over by the time an answer about them
// would come, and a run begun since the last check is checked at the
// next. A run counts from when its goroutine began, not from its claim:
// on a loaded machine the goroutines of a claim of a hundred begin over
// more than an interval, and asking about the ones not yet begun cost a
// statement at most ticks for runs that then took microseconds.
func (w *Worker) watch() {
	defer w.background.Done()
	t := time.NewTicker(w.cfg.PollInterval)
	defer t.Stop()
	for {
		var now time.Time
		select {
		case <-w.bg.Done():
			return
		case now = <-t.C:
		}
		older := now.Add(-w.cfg.PollInterval).UnixNano()
		w.mu.Lock()
		claims := make([]core.Claim, 0, len(w.running))
		for _, r := range w.running {
			if at := r.started.Load(); at != 0 && at < older {
				claims = append(claims, *r.claim)
			}
		}
		w.mu.Unlock()
		if len(claims) == 0 {
			continue
		}
		lost, err := w.lost(w.bg, claims)
		if err != nil {
			if w.bg.Err() == nil {
				w.log.Warn("plenum/worker: check running claims", "err", err)
			}
			continue
		}
		w.mu.Lock()
		for _, id := range lost {
			if r := w.running[id]; r != nil {
				r.cancel(ErrCancelled)
			}
		}
		w.mu.Unlock()
	}
}

// purge deletes what is past RetainFor, in bounded passes with a pause
// between them, so that claiming goes on at full speed meanwhile. A tick
// goes on while passes come back full, for up to one ReapInterval: a
// backlog (an application finishing more than a tick's worth of items
// per tick) is deleted at the passes' pace, not at one tick's worth of
// passes every interval (20 passes of 500 every 10 s, 1,000 items a
// second, were behind any queue claimed faster than that), and the next
// reap comes at most one interval late.
func (w *Worker) purge() {
	until := time.Now().Add(w.cfg.ReapInterval)
	for {
		r, err := w.store.Purge(w.bg, core.PurgeParams{OlderThan: w.cfg.RetainFor, Limit: purgeLimit})
		if err != nil {
			if w.bg.Err() == nil {
				w.log.Warn("plenum/worker: purge", "err", err)
			}
			return
		}
		if r != (core.PurgeResult{}) {
			w.event(w.bg, Event{Kind: EventPurged, Purge: r})
		}
		if r.Items < purgeLimit && r.Barriers < purgeLimit && r.Lanes < purgeLimit || !time.Now().Before(until) {
			return
		}
		select {
		case <-w.bg.Done():
			return
		case <-time.After(purgePause):
		}
	}
}

// Retention's pace: passes of purgeLimit rows, purgePause apart (which
// bounds the rate at purgeLimit / (a pass's time + purgePause)), for up to
// one ReapInterval per maintenance tick.
const (
	purgeLimit = 500
	purgePause = 20 * time.Millisecond
)

// maintain runs a reaper pass and retention every ReapInterval (with
// jitter, so that processes started together spread out), and reports queue depths to
// the hooks.
func (w *Worker) maintain() {
	defer w.background.Done()
	for {
		d := w.cfg.ReapInterval
		d += time.Duration(rand.Int64N(int64(d)/5+1)) - d/10
		t := time.NewTimer(d)
		select {
		case <-w.bg.Done():
			t.Stop()
			return
		case <-t.C:
		}
		r, err := w.store.Reap(w.bg, core.ReapParams{StaleAfter: w.cfg.StaleAfter, MaxCrashes: w.cfg.MaxCrashes})
		if err != nil && w.bg.Err() == nil {
			w.log.Warn("plenum/worker: reap", "err", err)
		}
		if r != (core.ReapResult{}) {
			w.event(w.bg, Event{Kind: EventReaped, Reap: r})
		}
		if w.cfg.RetainFor > 0 {
			w.purge()
		}
		if w.cfg.Hooks == nil {
			continue
		}
		for q := range w.cfg.Queues {
			if depth, err := w.store.Counts(w.bg, q); err == nil {
				w.event(w.bg, Event{Kind: EventQueueDepth, Queue: q, Depth: depth})
			}
		}
	}
}

// periodic enqueues the due ticks of Config.Periodic every
// PeriodicInterval (with jitter, so that processes started together do not
// all ask at once; EnqueueDue makes the losers of a race find nothing due).
func (w *Worker) periodic() {
	defer w.background.Done()
	for {
		d := w.cfg.PeriodicInterval
		d += time.Duration(rand.Int64N(int64(d)/5+1)) - d/10
		t := time.NewTimer(d)
		select {
		case <-w.bg.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if len(w.cfg.Periodic) > 0 {
			ticks, err := w.store.EnqueueDue(w.bg, w.cfg.Periodic...)
			w.ticked(ticks, err)
		}
		if w.cfg.StoredSchedules {
			ticks, err := w.store.EnqueueStoredDue(w.bg)
			w.ticked(ticks, err)
		}
	}
}

// ticked logs and reports the ticks one look enqueued.
func (w *Worker) ticked(ticks []core.Tick, err error) {
	if err != nil && w.bg.Err() == nil {
		w.log.Warn("plenum/worker: periodic", "err", err)
	}
	for _, tk := range ticks {
		w.log.Debug("plenum/worker: tick enqueued", "schedule", tk.Schedule, "at", tk.At, "item", tk.ID)
		w.event(w.bg, Event{Kind: EventTicked, Queue: tk.Queue, Tick: tk})
	}
}
