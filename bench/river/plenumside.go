package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/worker"
)

// plenumQueue and plenumKind match River's bench: the default queue, one
// kind.
const (
	plenumQueue = "default"
	plenumKind  = "benchmark"
)

func plenumDescription(b *bench) string {
	return fmt.Sprintf("package worker with its defaults, one worker, queue %q MaxWorkers %d; database/sql over pgx, MaxOpenConns %d; tables %s<round>_*, enqueued in batches of %s",
		plenumQueue, b.o.Concurrency, b.db.Stats().MaxOpenConnections, b.plenumPrefix(-1), commas(int64(b.insertBatch())))
}

// plenumPrefix names round i's tables (a new set each round, as River's
// table is emptied each round).
func (b *bench) plenumPrefix(i int) string {
	if i < 0 {
		return "pb_" + b.tag + "_"
	}
	return "pb_" + b.tag + "_" + strconv.Itoa(i) + "_"
}

// plenumRound creates round i's tables, enqueues the jobs and times their
// drain by one worker, then drops the tables.
func (b *bench) plenumRound(ctx context.Context, i int) (_ drain, err error) {
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
		return drain{}, err
	}
	specs := make([]core.ItemSpec, 0, riverInsertBatch)
	for n := 0; n < b.o.Items; {
		specs = specs[:0]
		for ; n < b.o.Items && len(specs) < riverInsertBatch; n++ {
			specs = append(specs, core.ItemSpec{Queue: plenumQueue, Kind: plenumKind, Payload: json.RawMessage(`{"num":` + strconv.Itoa(n) + `}`)})
		}
		if _, err := st.Enqueue(ctx, specs...); err != nil {
			return drain{}, fmt.Errorf("enqueue: %w", err)
		}
	}
	var done, failed atomic.Int64
	all := make(chan struct{})
	hooks := worker.HookFunc(func(_ context.Context, e worker.Event) {
		switch e.Kind {
		case worker.EventCompleted:
			if done.Add(1) == int64(b.o.Items) {
				close(all)
			}
		case worker.EventFailed, worker.EventDead, worker.EventLost:
			failed.Add(1)
		}
	})
	cfg := worker.Config{
		Queues: map[string]worker.QueueConfig{plenumQueue: {MaxWorkers: b.o.Concurrency}},
		Hooks:  hooks,
	}
	// New refuses a pool bounded below one connection per handler plus
	// its loops', River's size here: the no-op handlers never take one,
	// so the connections opened are still the claims', completions' and
	// heartbeats'.
	worker.FitPool(st, cfg)
	w, err := worker.New(st, cfg)
	if err != nil {
		return drain{}, err
	}
	w.HandleFunc(plenumKind, func(context.Context, *worker.Job[json.RawMessage]) error { return nil })
	if err := w.Start(ctx); err != nil {
		return drain{}, err
	}
	if b.o.CPUProfile != "" {
		stop, perr := profile(b.o.CPUProfile, i)
		if perr != nil {
			_ = w.Stop(context.WithoutCancel(ctx))
			return drain{}, perr
		}
		defer stop()
	}
	stop, err := b.meter(ctx, plenumAppName)
	if err != nil {
		_ = w.Stop(context.WithoutCancel(ctx))
		return drain{}, err
	}
	timeout := time.NewTimer(b.o.Timeout)
	defer timeout.Stop()
	select {
	case <-all:
	case <-timeout.C:
		err = fmt.Errorf("drain: %d of %d done after %v", done.Load(), b.o.Items, b.o.Timeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	d, merr := stop()
	err = errors.Join(err, merr)
	if serr := w.Stop(context.WithoutCancel(ctx)); serr != nil {
		err = errors.Join(err, fmt.Errorf("stop: %w", serr))
	}
	if n := failed.Load(); n > 0 {
		err = errors.Join(err, fmt.Errorf("%d jobs failed or lost their claims", n))
	}
	return d, err
}
