package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
	"github.com/plenumdb/plenum/worker"
)

// The steady state: users run producers and workers at once, where every
// other figure drains a full table. A producer keeps about steadyDepth
// items available, inserting steadyInsert whenever fewer are (available:
// inserted and not yet started by a handler, as the producer counts
// them); steadyHandlers handlers each do steadyWork of work (a sleep);
// after a warm-up, the completions are counted in windows of
// steadyWindow, and each handler's start is timed from just before the
// enqueue of its batch. bench/river runs the same scenario on River and
// Plenum side by side.
const (
	steadyDepth    = 4000
	steadyInsert   = 128
	steadyHandlers = 64
	steadyWork     = time.Millisecond
	steadyWindow   = 5 * time.Second
)

// steadyOptions configure the steady state, behind --steady.
type steadyOptions struct {
	Enabled         bool
	Warmup, Measure time.Duration
	Rounds          int
}

func defaultSteadyOptions() steadyOptions {
	return steadyOptions{Warmup: 30 * time.Second, Measure: 3 * time.Minute, Rounds: 3}
}

func (o steadyOptions) validate() error {
	if !o.Enabled {
		return nil
	}
	switch {
	case o.Warmup < 0:
		return cmdline.Usagef("--steady-warmup %v: want 0 or more", o.Warmup)
	case o.Measure <= 0:
		return cmdline.Usagef("--steady-measure %v: want more than 0", o.Measure)
	case o.Rounds < 1 || o.Rounds > 100:
		return cmdline.Usagef("--steady-rounds %d: want 1 to 100", o.Rounds)
	}
	return nil
}

// windows returns how many windows the measured period holds and how long
// each is: steadyWindow, or the whole period when it is shorter.
func (o steadyOptions) windows() (int, time.Duration) {
	n := max(1, int(o.Measure/steadyWindow))
	return n, o.Measure / time.Duration(n)
}

// steadyRound is what one round of the steady state measured.
type steadyRound struct {
	// Rate is the median of the windows' completion rates, per second.
	Rate    float64
	Windows []float64
	// P50, P95 and P99 are the pickup latency, enqueue to handler start,
	// of the handlers that started in the measured period.
	P50, P95, P99 time.Duration
	Pickups       int64
}

// steadyReport is what --steady measured.
type steadyReport struct {
	Rounds []steadyRound
}

// Rate is the median of the rounds' rates.
func (r steadyReport) Rate() float64 {
	rates := make([]float64, len(r.Rounds))
	for i, x := range r.Rounds {
		rates[i] = x.Rate
	}
	return medianOf(rates)
}

// medianOf is the median of xs, 0 for none.
func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// latencyHist is a histogram of durations in microseconds, safe for
// concurrent use: exact below 1,024 µs, then 512 buckets per power of two
// (within 0.2%), so that minutes of pickups at tens of thousands a second
// take a fixed 300 KiB.
type latencyHist struct {
	counts [42 << histBits]atomic.Int64
}

const histBits = 10

func histBucket(us int64) int {
	if us < 0 {
		us = 0
	}
	if us < 1<<histBits {
		return int(us)
	}
	e := bits.Len64(uint64(us)) - histBits
	return min(e<<histBits|int(us>>e), len(latencyHist{}.counts)-1)
}

// histValue is the middle of bucket i, in microseconds.
func histValue(i int) int64 {
	e, m := i>>histBits, int64(i&(1<<histBits-1))
	if e == 0 {
		return m
	}
	return m<<e + 1<<(e-1)
}

func (h *latencyHist) add(d time.Duration) { h.counts[histBucket(d.Microseconds())].Add(1) }

// quantiles returns the durations at qs (each in (0, 1]) and how many
// were added.
func (h *latencyHist) quantiles(qs ...float64) ([]time.Duration, int64) {
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

// steadyMeter counts one round's pickups and completions; the side's
// handlers and hooks report to it.
type steadyMeter struct {
	inserted, started, completed atomic.Int64
	// picked counts the pickups recorded while measuring.
	picked    atomic.Int64
	measuring atomic.Bool
	hist      latencyHist
}

// start records a handler starting on an item enqueued at stamp (Unix
// nanoseconds).
func (m *steadyMeter) start(stamp int64) {
	m.started.Add(1)
	if m.measuring.Load() {
		m.hist.add(time.Since(time.Unix(0, stamp)))
		m.picked.Add(1)
	}
}

// steadyArgs is the payload of a steady-state item: when its batch was
// enqueued.
type steadyArgs struct {
	T int64 `json:"t"`
}

// steadySide is one side of the steady state.
type steadySide struct {
	// start starts the side's handlers, which report to m, and returns
	// what stops them.
	start func(ctx context.Context, m *steadyMeter) (stop func(context.Context) error, err error)
	// insert enqueues n items stamped with stamp.
	insert func(ctx context.Context, n int, stamp int64) error
}

// runSteady runs one round of the steady state on side.
func runSteady(ctx context.Context, side steadySide, o steadyOptions) (r steadyRound, err error) {
	m := &steadyMeter{}
	stop, err := side.start(ctx, m)
	if err != nil {
		return r, err
	}
	defer func() {
		if serr := stop(context.WithoutCancel(ctx)); serr != nil {
			err = errors.Join(err, fmt.Errorf("stop: %w", serr))
		}
	}()
	pctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var perr error
	wg.Go(func() {
		if perr = produce(pctx, side, m); perr != nil {
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
	if err := wait(o.Warmup); err != nil {
		return r, err
	}
	m.measuring.Store(true)
	n, win := o.windows()
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
	r.Rate = medianOf(r.Windows)
	qs, total := m.hist.quantiles(0.50, 0.95, 0.99)
	r.P50, r.P95, r.P99, r.Pickups = qs[0], qs[1], qs[2], total
	return r, nil
}

// waitFlowing returns once m counts a completion since it counted
// prev, and, when last, a pickup in the measured period: a window that
// saw none (a stalled side, or a very short --measure on a loaded machine)
// runs on until it does, so that its rate is completions over the time
// they took and the latency has a sample. It returns early only if ctx
// ends (the producer stopped, or the run).
func waitFlowing(ctx context.Context, m *steadyMeter, prev int64, last bool) error {
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

// produce keeps about steadyDepth items available until ctx ends,
// inserting steadyInsert whenever fewer are.
func produce(ctx context.Context, side steadySide, m *steadyMeter) error {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		if m.inserted.Load()-m.started.Load() < steadyDepth {
			if err := side.insert(ctx, steadyInsert, time.Now().UnixNano()); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("producer: %w", err)
			}
			m.inserted.Add(steadyInsert)
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// plenumSteady is Plenum's side of the steady state on queue: one worker
// on the documented defaults with steadyHandlers handlers, and a
// producer enqueuing through the same store.
func plenumSteady(st *core.Store, queue string) steadySide {
	const kind = "steady"
	return steadySide{
		start: func(ctx context.Context, m *steadyMeter) (func(context.Context) error, error) {
			cfg := worker.Config{
				Queues: map[string]worker.QueueConfig{queue: {MaxWorkers: steadyHandlers}},
				Hooks: worker.HookFunc(func(_ context.Context, e worker.Event) {
					if e.Kind == worker.EventCompleted {
						m.completed.Add(1)
					}
				}),
			}
			worker.FitPool(st, cfg)
			w, err := worker.New(st, cfg)
			if err != nil {
				return nil, err
			}
			worker.Handle(w, kind, func(_ context.Context, job *worker.Job[steadyArgs]) error {
				m.start(job.Args.T)
				time.Sleep(steadyWork)
				return nil
			})
			if err := w.Start(ctx); err != nil {
				return nil, err
			}
			return w.Stop, nil
		},
		insert: func(ctx context.Context, n int, stamp int64) error {
			payload, err := json.Marshal(steadyArgs{T: stamp})
			if err != nil {
				return err
			}
			specs := make([]core.ItemSpec, n)
			for i := range specs {
				specs[i] = core.ItemSpec{Queue: queue, Kind: kind, Payload: payload}
			}
			_, err = st.Enqueue(ctx, specs...)
			return err
		},
	}
}

// steadyAbout describes the scenario for the output.
func steadyAbout(o steadyOptions) string {
	n, win := o.windows()
	return fmt.Sprintf("a producer keeps about %s items available, inserting %d whenever fewer are; %d handlers each work %v; %v of warm-up, then %v measured in %d windows of %v",
		cmdline.Commas(steadyDepth), steadyInsert, steadyHandlers, steadyWork, o.Warmup, o.Measure, n, win)
}

// steadyLine formats a round.
func steadyLine(r steadyRound) string {
	return fmt.Sprintf("%s items/s (median of %d windows), pickup p50 %v p95 %v p99 %v (%s pickups)",
		cmdline.Commas(int64(r.Rate)), len(r.Windows), r.P50.Round(100*time.Microsecond), r.P95.Round(100*time.Microsecond), r.P99.Round(100*time.Microsecond), cmdline.Commas(r.Pickups))
}

// runSteadyBench runs --steady's rounds on Plenum's store, each on a new
// queue, and prints them.
func runSteadyBench(ctx context.Context, w io.Writer, rep *benchReport, st *core.Store, o benchOptions, settle func() error) error {
	so := o.Steady
	fmt.Fprintf(w, "\nsteady state, Plenum's runtime (package worker on its documented defaults, one worker, MaxWorkers %d), %s:\n", steadyHandlers, cmdline.Plural(so.Rounds, "round"))
	fmt.Fprintf(w, "  %s\n", steadyAbout(so))
	rep.Steady = &steadyReport{}
	for i := range so.Rounds {
		if err := settle(); err != nil {
			return fmt.Errorf("bench: checkpoint: %w", err)
		}
		r, err := runSteady(ctx, plenumSteady(st, fmt.Sprintf("bench.steady.%d", i)), so)
		if err != nil {
			return fmt.Errorf("bench: steady state, round %d: %w", i+1, err)
		}
		rep.Steady.Rounds = append(rep.Steady.Rounds, r)
		fmt.Fprintf(w, "  round %d: %s\n", i+1, steadyLine(r))
	}
	fmt.Fprintf(w, "steady state: %s items/s, the median of the rounds (bench/river --steady runs it beside River)\n", cmdline.Commas(int64(rep.Steady.Rate())))
	return nil
}
