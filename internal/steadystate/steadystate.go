// Package steadystate measures a job runtime's steady state, where
// producers and handlers run at once: a producer keeps about Depth jobs
// available, inserting Batch whenever fewer are (available: inserted and
// not yet started by a handler, as the producer counts them); after a
// warm-up, the completions are counted in windows of Window, and each
// handler's start is timed from just before the insert of its batch.
// Both `plenum bench --steady` (internal/cmd/bench) and bench/river
// --steady run it; this package holds what they share, so that the two
// measure alike.
package steadystate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// The scenario's shape.
const (
	// Depth is about how many jobs the producer keeps available.
	Depth = 4000
	// Batch is how many jobs the producer inserts at once.
	Batch = 128
	// Handlers is how many handlers a side runs by default.
	Handlers = 64
	// Work is what each handler does per job (a sleep).
	Work = time.Millisecond
	// Window is how long each measured window lasts, unless the measured
	// period is shorter.
	Window = 5 * time.Second
)

// Windows returns how many windows a measured period holds and how long
// each is: Window, or the whole period when it is shorter.
func Windows(measure time.Duration) (int, time.Duration) {
	n := max(1, int(measure/Window))
	return n, measure / time.Duration(n)
}

// Median is the middle of xs (the mean of the two middle ones for an even
// count); 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Hist is a histogram of durations in microseconds, safe for concurrent
// use: exact below 1,024 µs, then 512 buckets per power of two (within
// 0.2%), so that minutes of pickups at tens of thousands a second take a
// fixed 300 KiB. Its zero value is empty and ready.
type Hist struct {
	counts [42 << histBits]atomic.Int64
}

const histBits = 10

// histBucket is the bucket of us microseconds.
func histBucket(us int64) int {
	if us < 0 {
		us = 0
	}
	if us < 1<<histBits {
		return int(us)
	}
	e := bits.Len64(uint64(us)) - histBits
	return min(e<<histBits|int(us>>e), len(Hist{}.counts)-1)
}

// histValue is the middle of bucket i, in microseconds.
func histValue(i int) int64 {
	e, m := i>>histBits, int64(i&(1<<histBits-1))
	if e == 0 {
		return m
	}
	return m<<e + 1<<(e-1)
}

// Add counts d.
func (h *Hist) Add(d time.Duration) { h.counts[histBucket(d.Microseconds())].Add(1) }

// Quantiles returns the durations at qs (each in (0, 1]) and how many
// were added.
func (h *Hist) Quantiles(qs ...float64) ([]time.Duration, int64) {
	var total int64
	for i := range h.counts {
		total += h.counts[i].Load()
	}
	out := make([]time.Duration, len(qs))
	if total == 0 {
		return out, 0
	}
	for k, q := range qs {
		rank := int64(math.Ceil(q * float64(total)))
		var seen int64
		for i := range h.counts {
			if seen += h.counts[i].Load(); seen >= rank {
				out[k] = time.Duration(histValue(i)) * time.Microsecond
				break
			}
		}
	}
	return out, total
}

// Meter counts one round's pickups and completions; the side's handlers
// and completion events report to it. Its zero value is ready; use a new
// one for each round.
type Meter struct {
	inserted, started, completed atomic.Int64
	// picked counts the pickups recorded while measuring.
	picked    atomic.Int64
	measuring atomic.Bool
	hist      Hist
}

// Start records a handler starting on a job inserted at stamp (Unix
// nanoseconds).
func (m *Meter) Start(stamp int64) {
	m.started.Add(1)
	if m.measuring.Load() {
		m.hist.Add(time.Since(time.Unix(0, stamp)))
		m.picked.Add(1)
	}
}

// Complete records a job completed.
func (m *Meter) Complete() { m.completed.Add(1) }

// Round is what one round of the steady state measured.
type Round struct {
	// Rate is the median of the windows' completion rates, per second.
	Rate    float64
	Windows []float64
	// P50, P95 and P99 are the pickup latency, insert to handler start,
	// of the handlers that started in the measured period.
	P50, P95, P99 time.Duration
	Pickups       int64
}

// InsertFunc inserts n jobs stamped with stamp (Unix nanoseconds), which
// their handlers pass to Meter.Start.
type InsertFunc func(ctx context.Context, n int, stamp int64) error

// Run runs one round on a side whose handlers are running and report to
// m: the producer inserting through insert, warmup, then measure in
// windows (see Windows). It returns when the round is measured, ctx ends,
// or the producer fails.
func Run(ctx context.Context, insert InsertFunc, m *Meter, warmup, measure time.Duration) (r Round, err error) {
	pctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var perr error
	wg.Go(func() {
		if perr = produce(pctx, insert, m); perr != nil {
			cancel()
		}
	})
	defer func() {
		cancel()
		wg.Wait()
		err = errors.Join(err, perr)
	}()
	wait := func(d time.Duration) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return nil
		case <-pctx.Done():
			if err := ctx.Err(); err != nil {
				return err
			}
			return errors.New("the producer stopped") // its error joins on return
		}
	}
	if err := wait(warmup); err != nil {
		return r, err
	}
	m.measuring.Store(true)
	n, win := Windows(measure)
	prev, at := m.completed.Load(), time.Now()
	for i := range n {
		if err := wait(win - time.Since(at)); err != nil {
			return r, err
		}
		if err := waitFlowing(pctx, m, prev, i == n-1); err != nil {
			return r, err
		}
		c, now := m.completed.Load(), time.Now()
		r.Windows = append(r.Windows, float64(c-prev)/now.Sub(at).Seconds())
		prev, at = c, now
	}
	m.measuring.Store(false)
	r.Rate = Median(r.Windows)
	qs, total := m.hist.Quantiles(0.50, 0.95, 0.99)
	r.P50, r.P95, r.P99, r.Pickups = qs[0], qs[1], qs[2], total
	return r, nil
}

// waitFlowing returns once m counts a completion since it counted
// prev, and, when last, a pickup in the measured period: a window that
// saw none (a stalled side, or a very short measured period on a loaded
// machine) runs on until it does, so that its rate is completions over
// the time they took and the latency has a sample. It returns early only
// if ctx ends (the producer stopped, or the run).
func waitFlowing(ctx context.Context, m *Meter, prev int64, last bool) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for m.completed.Load() == prev || (last && m.picked.Load() == 0) {
		select {
		case <-ctx.Done():
			return errors.New("the steady state stopped before its window saw a completion")
		case <-tick.C:
		}
	}
	return nil
}

// produce keeps about Depth jobs available until ctx ends, inserting
// Batch whenever fewer are.
func produce(ctx context.Context, insert InsertFunc, m *Meter) error {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		if m.inserted.Load()-m.started.Load() < Depth {
			if err := insert(ctx, Batch, time.Now().UnixNano()); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("producer: %w", err)
			}
			m.inserted.Add(Batch)
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
