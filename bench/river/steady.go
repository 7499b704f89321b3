package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/worker"
)

// The steady state (--steady): users run producers and workers at once,
// where the drain empties a full table. On each side a producer keeps
// about steadyDepth jobs available, inserting steadyInsert whenever fewer
// are (available: inserted and not yet started by a handler, as the
// producer counts them), through the side's own client, while
// --concurrency handlers (64 by default here) each do steadyWork of work
// (a sleep). After --warmup, the completions are counted in windows of
// steadyWindow over --measure, and each handler's start is timed from
// just before the insert of its batch: the round's rate is the median of
// its windows' rates. The same scenario is `plenum bench --steady` for
// Plenum alone on any database.
const (
	steadyDepth    = 4000
	steadyInsert   = 128
	steadyHandlers = 64
	steadyWork     = time.Millisecond
	steadyWindow   = 5 * time.Second
)

// windows returns how many windows the measured period holds and how long
// each is: steadyWindow, or the whole period when it is shorter.
func (o options) windows() (int, time.Duration) {
	n := max(1, int(o.Measure/steadyWindow))
	return n, o.Measure / time.Duration(n)
}

// steadyRound is what one round of the steady state measured.
type steadyRound struct {
	// rate is the median of the windows' completion rates, per second.
	rate          float64
	windows       int
	p50, p95, p99 time.Duration
	pickups       int64
}

func (r steadyRound) String() string {
	return fmt.Sprintf("%10s jobs/s (median of %d windows)  pickup p50 %v p95 %v p99 %v (%s pickups)",
		rate(r.rate), r.windows, r.p50.Round(100*time.Microsecond), r.p95.Round(100*time.Microsecond), r.p99.Round(100*time.Microsecond), commas(r.pickups))
}

// latencyHist is a histogram of durations in microseconds, safe for
// concurrent use: exact below 1,024 µs, then 512 buckets per power of two
// (within 0.2%), so that minutes of pickups take a fixed 300 KiB.
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
// handlers and events report to it.
type steadyMeter struct {
	inserted, started, completed atomic.Int64
	// picked counts the pickups recorded while measuring.
	picked    atomic.Int64
	measuring atomic.Bool
	hist      latencyHist
}

// start records a handler starting on a job inserted at stamp (Unix
// nanoseconds).
func (m *steadyMeter) start(stamp int64) {
	m.started.Add(1)
	if m.measuring.Load() {
		m.hist.add(time.Since(time.Unix(0, stamp)))
		m.picked.Add(1)
	}
}

// steadyArgs is a steady-state job: when its batch was inserted.
type steadyArgs struct {
	T int64 `json:"t"`
}

func (steadyArgs) Kind() string { return "steady" }

// steadySide is one client in the steady state.
type steadySide struct {
	// insert inserts n jobs stamped with stamp.
	insert func(ctx context.Context, n int, stamp int64) error
}

// steady runs one round on a side whose handlers are running and report
// to m: the producer, the warm-up, the measured windows.
func (b *bench) steady(ctx context.Context, side steadySide, m *steadyMeter) (r steadyRound, err error) {
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
	if err := wait(b.o.Warmup); err != nil {
		return r, err
	}
	m.measuring.Store(true)
	n, win := b.o.windows()
	rates := make([]float64, 0, n)
	prev, at := m.completed.Load(), time.Now()
	for i := range n {
		if err := wait(win - time.Since(at)); err != nil {
			return r, err
		}
		if err := waitFlowing(pctx, m, prev, i == n-1); err != nil {
			return r, err
		}
		c, now := m.completed.Load(), time.Now()
		rates = append(rates, float64(c-prev)/now.Sub(at).Seconds())
		prev, at = c, now
	}
	m.measuring.Store(false)
	qs, total := m.hist.quantiles(0.50, 0.95, 0.99)
	return steadyRound{rate: median(rates), windows: n, p50: qs[0], p95: qs[1], p99: qs[2], pickups: total}, nil
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

// produce keeps about steadyDepth jobs available until ctx ends,
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

// steadyWorker is River's steady-state handler.
type steadyWorker struct {
	river.WorkerDefaults[steadyArgs]
	m *steadyMeter
}

func (w *steadyWorker) Work(_ context.Context, job *river.Job[steadyArgs]) error {
	w.m.start(job.Args.T)
	time.Sleep(steadyWork)
	return nil
}

// riverSteady is River's round of the steady state: its job table emptied
// as before a drain, one client configured as River's bench configures it,
// the producer inserting through that client.
func (b *bench) riverSteady(ctx context.Context) (_ steadyRound, err error) {
	table := pgx.Identifier{b.schema, "river_job"}.Sanitize()
	for _, stmt := range []string{"TRUNCATE " + table, "VACUUM FULL " + table} {
		if _, err := b.pool.Exec(ctx, stmt); err != nil {
			return steadyRound{}, fmt.Errorf("%s: %w", stmt, err)
		}
	}
	m := &steadyMeter{}
	workers := river.NewWorkers()
	river.AddWorker(workers, &steadyWorker{m: m})
	client, err := river.NewClient(riverpgxv5.New(b.pool), &river.Config{
		FetchCooldown:     riverFetchCooldown,
		FetchPollInterval: riverFetchPollInterval,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: b.o.Concurrency}},
		Schema:            b.schema,
		Workers:           workers,
	})
	if err != nil {
		return steadyRound{}, err
	}
	events, cancelEvents := client.SubscribeConfig(&river.SubscribeConfig{
		ChanSize: 1 << 20, // River drops events a full channel cannot take: never here
		Kinds:    []river.EventKind{river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled},
	})
	var failed atomic.Int64
	var counting sync.WaitGroup
	counting.Go(func() {
		for e := range events {
			if e.Kind == river.EventKindJobCompleted {
				m.completed.Add(1)
			} else {
				failed.Add(1)
			}
		}
	})
	if err := client.Start(ctx); err != nil {
		cancelEvents()
		counting.Wait()
		return steadyRound{}, fmt.Errorf("start: %w", err)
	}
	defer func() {
		if serr := client.Stop(context.WithoutCancel(ctx)); serr != nil {
			err = errors.Join(err, fmt.Errorf("stop: %w", serr))
		}
		cancelEvents()
		counting.Wait()
		if n := failed.Load(); n > 0 {
			err = errors.Join(err, fmt.Errorf("%d jobs failed or were cancelled", n))
		}
	}()
	batch := make([]river.InsertManyParams, steadyInsert)
	return b.steady(ctx, steadySide{insert: func(ctx context.Context, n int, stamp int64) error {
		batch = batch[:0]
		for range n {
			batch = append(batch, river.InsertManyParams{Args: steadyArgs{T: stamp}})
		}
		_, err := client.InsertMany(ctx, batch)
		return err
	}}, m)
}

// plenumSteady is Plenum's round of the steady state: new tables, one
// worker on its defaults, the producer enqueuing through its store.
func (b *bench) plenumSteady(ctx context.Context, i int) (_ steadyRound, err error) {
	prefix := b.plenumPrefix(i)
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if derr := migrations.Drop(dctx, b.db, postgres.Dialect(), prefix); derr != nil {
			err = errors.Join(err, fmt.Errorf("drop tables %s*: %w", prefix, derr))
		}
	}()
	st, err := core.Open(ctx, b.db, postgres.Dialect(), core.Options{Prefix: prefix, Migrate: true})
	if err != nil {
		return steadyRound{}, err
	}
	m := &steadyMeter{}
	var failed atomic.Int64
	cfg := worker.Config{
		Queues: map[string]worker.QueueConfig{plenumQueue: {MaxWorkers: b.o.Concurrency}},
		Hooks: worker.HookFunc(func(_ context.Context, e worker.Event) {
			switch e.Kind {
			case worker.EventCompleted:
				m.completed.Add(1)
			case worker.EventFailed, worker.EventDead, worker.EventLost:
				failed.Add(1)
			}
		}),
	}
	worker.FitPool(st, cfg)
	w, err := worker.New(st, cfg)
	if err != nil {
		return steadyRound{}, err
	}
	worker.Handle(w, steadyArgs{}.Kind(), func(_ context.Context, job *worker.Job[steadyArgs]) error {
		m.start(job.Args.T)
		time.Sleep(steadyWork)
		return nil
	})
	if err := w.Start(ctx); err != nil {
		return steadyRound{}, err
	}
	defer func() {
		if serr := w.Stop(context.WithoutCancel(ctx)); serr != nil {
			err = errors.Join(err, fmt.Errorf("stop: %w", serr))
		}
		if n := failed.Load(); n > 0 {
			err = errors.Join(err, fmt.Errorf("%d jobs failed or lost their claims", n))
		}
	}()
	specs := make([]core.ItemSpec, steadyInsert)
	return b.steady(ctx, steadySide{insert: func(ctx context.Context, n int, stamp int64) error {
		payload, err := json.Marshal(steadyArgs{T: stamp})
		if err != nil {
			return err
		}
		specs = specs[:0]
		for range n {
			specs = append(specs, core.ItemSpec{Queue: plenumQueue, Kind: steadyArgs{}.Kind(), Payload: payload})
		}
		_, err = st.Enqueue(ctx, specs...)
		return err
	}}, m)
}

// steadyRounds runs the steady state's alternating rounds, printing each.
func (b *bench) steadyRounds(ctx context.Context, out io.Writer) (results, error) {
	var r results
	for i := range b.o.Rounds {
		if b.o.Only != "plenum" {
			s, err := b.riverSteady(ctx)
			if err != nil {
				return r, fmt.Errorf("river round %d: %w", i+1, err)
			}
			r.river = append(r.river, s.rate)
			fmt.Fprintf(out, "round %d  river   %s\n", i+1, s)
		}
		if b.o.Only != "river" {
			s, err := b.plenumSteady(ctx, i)
			if err != nil {
				return r, fmt.Errorf("plenum round %d: %w", i+1, err)
			}
			r.plenum = append(r.plenum, s.rate)
			fmt.Fprintf(out, "round %d  plenum  %s", i+1, s)
			if len(r.river) > i {
				fmt.Fprintf(out, "  plenum/river %.2f", r.plenum[i]/r.river[i])
			}
			fmt.Fprintln(out)
		}
	}
	return r, nil
}

// steadyAbout describes the steady state for the output.
func steadyAbout(o options) string {
	n, win := o.windows()
	return fmt.Sprintf("steady state: a producer per client keeps about %s jobs available, inserting %s whenever fewer are; %d handlers in each client, each working %v; %v of warm-up, then %v measured in %d windows of %v; %s rounds each, alternating",
		commas(steadyDepth), strconv.Itoa(steadyInsert), o.Concurrency, steadyWork, o.Warmup, o.Measure, n, win, strconv.Itoa(o.Rounds))
}
