package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/steadystate"
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
// its windows' rates. Package steadystate measures it, as it does for
// `plenum bench --steady`, the same scenario for Plenum alone on any
// database.
const (
	steadyDepth    = steadystate.Depth
	steadyInsert   = steadystate.Batch
	steadyHandlers = steadystate.Handlers
	steadyWork     = steadystate.Work
)

// windows returns how many windows the measured period holds and how long
// each is.
func (o options) windows() (int, time.Duration) { return steadystate.Windows(o.Measure) }

// steadyRound is what one round of the steady state measured.
type steadyRound struct{ steadystate.Round }

func (r steadyRound) String() string {
	return fmt.Sprintf("%10s jobs/s (median of %d windows)  pickup p50 %v p95 %v p99 %v (%s pickups)",
		rate(r.Rate), len(r.Windows), r.P50.Round(100*time.Microsecond), r.P95.Round(100*time.Microsecond), r.P99.Round(100*time.Microsecond), commas(r.Pickups))
}

// steadyArgs is a steady-state job: when its batch was inserted.
type steadyArgs struct {
	T int64 `json:"t"`
}

func (steadyArgs) Kind() string { return "steady" }

// steady runs one round on a side whose handlers are running and report
// to m, the producer inserting through insert.
func (b *bench) steady(ctx context.Context, insert steadystate.InsertFunc, m *steadystate.Meter) (steadyRound, error) {
	r, err := steadystate.Run(ctx, insert, m, b.o.Warmup, b.o.Measure)
	return steadyRound{r}, err
}

// steadyWorker is River's steady-state handler.
type steadyWorker struct {
	river.WorkerDefaults[steadyArgs]
	m *steadystate.Meter
}

func (w *steadyWorker) Work(_ context.Context, job *river.Job[steadyArgs]) error {
	w.m.Start(job.Args.T)
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
	m := &steadystate.Meter{}
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
				m.Complete()
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
	return b.steady(ctx, func(ctx context.Context, n int, stamp int64) error {
		batch = batch[:0]
		for range n {
			batch = append(batch, river.InsertManyParams{Args: steadyArgs{T: stamp}})
		}
		_, err := client.InsertMany(ctx, batch)
		return err
	}, m)
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
	m := &steadystate.Meter{}
	var failed atomic.Int64
	cfg := worker.Config{
		Queues: map[string]worker.QueueConfig{plenumQueue: {MaxWorkers: b.o.Concurrency}},
		Hooks: worker.HookFunc(func(_ context.Context, e worker.Event) {
			switch e.Kind {
			case worker.EventCompleted:
				m.Complete()
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
		m.Start(job.Args.T)
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
	return b.steady(ctx, func(ctx context.Context, n int, stamp int64) error {
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
	}, m)
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
			r.river = append(r.river, s.Rate)
			fmt.Fprintf(out, "round %d  river   %s\n", i+1, s)
		}
		if b.o.Only != "river" {
			s, err := b.plenumSteady(ctx, i)
			if err != nil {
				return r, fmt.Errorf("plenum round %d: %w", i+1, err)
			}
			r.plenum = append(r.plenum, s.Rate)
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
