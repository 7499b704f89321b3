package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// River's `river bench` settings (cmd/river/riverbench in River's
// repository, v0.51): a fetch cooldown of 2 ms, a fetch poll interval of
// 20 ms, 2,000 workers on the default queue, jobs inserted with InsertMany
// in batches of 5,000 into a truncated and vacuumed table.
const (
	riverFetchCooldown     = 2 * time.Millisecond
	riverFetchPollInterval = 20 * time.Millisecond
	riverBenchWorkers      = 2_000
	riverInsertBatch       = 5_000
)

// openRiverPool opens the pool as River's CLI does: pgxpool's defaults,
// with its statement and idle-in-transaction timeouts (and its
// application_name, which dsn carries).
func openRiverPool(ctx context.Context, dsn string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("river: the DSN: %w", err)
	}
	setIfUnset := func(name, value string) {
		if cfg.ConnConfig.RuntimeParams[name] == "" {
			cfg.ConnConfig.RuntimeParams[name] = value
		}
	}
	setIfUnset("idle_in_transaction_session_timeout", strconv.Itoa(int((11 * time.Second).Milliseconds())))
	setIfUnset("statement_timeout", strconv.Itoa(int((10 * time.Second).Milliseconds())))
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("river: connect: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("river: connect: %w", err)
	}
	return pool, nil
}

func riverDescription(b *bench) string {
	return fmt.Sprintf("riverqueue/river v0.51.2, riverpgxv5, schema %s; FetchCooldown %v, FetchPollInterval %v, queue %q MaxWorkers %d; pgxpool MaxConns %d; InsertMany in batches of %s",
		b.riverSchema(), riverFetchCooldown, riverFetchPollInterval, river.QueueDefault, b.o.Concurrency, b.pool.Config().MaxConns, commas(int64(b.insertBatch())))
}

// insertBatch is how many jobs each client inserts at once: River's
// bench's batches for the drain, the producer's in the steady state.
func (b *bench) insertBatch() int {
	if b.o.Steady {
		return steadyInsert
	}
	return riverInsertBatch
}

func (b *bench) riverSchema() string { return "river_bench_" + b.tag }

// migrateRiver creates River's schema and migrates it with rivermigrate.
func (b *bench) migrateRiver(ctx context.Context) error {
	schema := b.riverSchema()
	if _, err := b.pool.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		return fmt.Errorf("river: create schema %s: %w", schema, err)
	}
	b.schema = schema
	m, err := rivermigrate.New(riverpgxv5.New(b.pool), &rivermigrate.Config{Schema: schema})
	if err != nil {
		return fmt.Errorf("river: migrator: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("river: migrate: %w", err)
	}
	return nil
}

// benchArgs is the job River's bench inserts.
type benchArgs struct {
	Num int `json:"num"`
}

func (benchArgs) Kind() string { return "benchmark" }

// noopWorker works a job by doing nothing.
type noopWorker struct {
	river.WorkerDefaults[benchArgs]
}

func (*noopWorker) Work(context.Context, *river.Job[benchArgs]) error { return nil }

// riverRound resets River's job table, inserts the jobs and times their
// drain.
func (b *bench) riverRound(ctx context.Context) (drain, error) {
	table := pgx.Identifier{b.schema, "river_job"}.Sanitize()
	for _, stmt := range []string{"TRUNCATE " + table, "VACUUM FULL " + table} {
		if _, err := b.pool.Exec(ctx, stmt); err != nil {
			return drain{}, fmt.Errorf("%s: %w", stmt, err)
		}
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &noopWorker{})
	client, err := river.NewClient(riverpgxv5.New(b.pool), &river.Config{
		FetchCooldown:     riverFetchCooldown,
		FetchPollInterval: riverFetchPollInterval,
		Queues:            map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: b.o.Concurrency}},
		Schema:            b.schema,
		Workers:           workers,
	})
	if err != nil {
		return drain{}, err
	}
	batch := make([]river.InsertManyParams, 0, riverInsertBatch)
	for n := 0; n < b.o.Items; {
		batch = batch[:0]
		for ; n < b.o.Items && len(batch) < riverInsertBatch; n++ {
			batch = append(batch, river.InsertManyParams{Args: benchArgs{Num: n}})
		}
		if _, err := client.InsertMany(ctx, batch); err != nil {
			return drain{}, fmt.Errorf("insert: %w", err)
		}
	}
	events, cancel := client.SubscribeConfig(&river.SubscribeConfig{
		ChanSize: b.o.Items,
		Kinds:    []river.EventKind{river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled},
	})
	defer cancel()
	if err := client.Start(ctx); err != nil {
		return drain{}, fmt.Errorf("start: %w", err)
	}
	stop, err := b.meter(ctx, riverAppName)
	if err != nil {
		_ = client.Stop(context.WithoutCancel(ctx))
		return drain{}, err
	}
	timeout := time.NewTimer(b.o.Timeout)
	defer timeout.Stop()
	for done := 0; done < b.o.Items; {
		select {
		case e := <-events:
			if e.Kind != river.EventKindJobCompleted {
				_ = client.Stop(context.WithoutCancel(ctx))
				return drain{}, fmt.Errorf("job %d: %s", e.Job.ID, e.Kind)
			}
			done++
		case <-timeout.C:
			_ = client.Stop(context.WithoutCancel(ctx))
			return drain{}, fmt.Errorf("drain: not done after %v", b.o.Timeout)
		case <-ctx.Done():
			_ = client.Stop(context.WithoutCancel(ctx))
			return drain{}, ctx.Err()
		}
	}
	d, err := stop()
	if serr := client.Stop(ctx); serr != nil {
		return drain{}, fmt.Errorf("stop: %w", serr)
	}
	return d, err
}
