package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
	"github.com/plenumdb/plenum/internal/steadystate"
	"github.com/plenumdb/plenum/worker"
)

// The steady state (package steadystate): a producer and
// steadystate.Handlers handlers on Plenum's runtime at once, where every
// other figure drains a full table. bench/river runs the same scenario on
// River and Plenum side by side.

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
// each is.
func (o steadyOptions) windows() (int, time.Duration) { return steadystate.Windows(o.Measure) }

// steadyRound is what one round of the steady state measured.
type steadyRound = steadystate.Round

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
	return steadystate.Median(rates)
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
	start func(ctx context.Context, m *steadystate.Meter) (stop func(context.Context) error, err error)
	// insert enqueues n items stamped with stamp.
	insert steadystate.InsertFunc
}

// runSteady runs one round of the steady state on side.
func runSteady(ctx context.Context, side steadySide, o steadyOptions) (r steadyRound, err error) {
	m := &steadystate.Meter{}
	stop, err := side.start(ctx, m)
	if err != nil {
		return r, err
	}
	defer func() {
		if serr := stop(context.WithoutCancel(ctx)); serr != nil {
			err = errors.Join(err, fmt.Errorf("stop: %w", serr))
		}
	}()
	return steadystate.Run(ctx, side.insert, m, o.Warmup, o.Measure)
}

// plenumSteady is Plenum's side of the steady state on queue: one worker
// on the documented defaults with steadystate.Handlers handlers, and a
// producer enqueuing through the same store.
func plenumSteady(st *core.Store, queue string) steadySide {
	const kind = "steady"
	return steadySide{
		start: func(ctx context.Context, m *steadystate.Meter) (func(context.Context) error, error) {
			cfg := worker.Config{
				Queues: map[string]worker.QueueConfig{queue: {MaxWorkers: steadystate.Handlers}},
				Hooks: worker.HookFunc(func(_ context.Context, e worker.Event) {
					if e.Kind == worker.EventCompleted {
						m.Complete()
					}
				}),
			}
			worker.FitPool(st, cfg)
			w, err := worker.New(st, cfg)
			if err != nil {
				return nil, err
			}
			worker.Handle(w, kind, func(_ context.Context, job *worker.Job[steadyArgs]) error {
				m.Start(job.Args.T)
				time.Sleep(steadystate.Work)
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
		cmdline.Commas(steadystate.Depth), steadystate.Batch, steadystate.Handlers, steadystate.Work, o.Warmup, o.Measure, n, win)
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
	fmt.Fprintf(w, "\nsteady state, Plenum's runtime (package worker on its documented defaults, one worker, MaxWorkers %d), %s:\n", steadystate.Handlers, cmdline.Plural(so.Rounds, "round"))
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
