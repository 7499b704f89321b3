package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/plenumdb/plenum/postgres"
)

// bench holds both clients' connections to the one database.
type bench struct {
	o      options
	tag    string        // names River's schema and Plenum's prefixes
	pool   *pgxpool.Pool // River's, opened as River's CLI opens it
	db     *sql.DB       // Plenum's, limited to as many connections
	schema string        // River's schema, once created
}

// open connects both clients to o.DSN and migrates River's schema.
func open(ctx context.Context, o options) (*bench, error) {
	b := &bench{o: o, tag: randomTag()}
	pool, err := openRiverPool(ctx, o.DSN)
	if err != nil {
		return nil, err
	}
	b.pool = pool
	if b.db, err = postgres.Open(o.DSN); err != nil {
		pool.Close()
		return nil, err
	}
	// The same number of connections on both sides: River's pool's.
	b.db.SetMaxOpenConns(int(pool.Config().MaxConns))
	b.db.SetMaxIdleConns(int(pool.Config().MaxConns))
	if err := b.migrateRiver(ctx); err != nil {
		return nil, errors.Join(err, b.close(ctx))
	}
	return b, nil
}

// close drops River's schema and closes both pools.
func (b *bench) close(ctx context.Context) error {
	var err error
	if b.schema != "" {
		ctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		if _, derr := b.pool.Exec(ctx, "DROP SCHEMA "+b.schema+" CASCADE"); derr != nil {
			err = fmt.Errorf("drop River's schema %s: %w", b.schema, derr)
		}
	}
	b.pool.Close()
	return errors.Join(err, b.db.Close())
}

// describe prints the server, its durability settings and both clients'
// configurations.
func (b *bench) describe(ctx context.Context, out io.Writer) error {
	var version string
	if err := b.db.QueryRowContext(ctx, "SELECT version()").Scan(&version); err != nil {
		return fmt.Errorf("server version: %w", err)
	}
	fmt.Fprintf(out, "River and Plenum's worker runtime on %s\n", version)
	var settings []string
	for _, name := range []string{"synchronous_commit", "fsync", "wal_sync_method", "default_transaction_isolation", "shared_buffers", "max_connections"} {
		var v string
		if err := b.db.QueryRowContext(ctx, "SELECT current_setting($1)", name).Scan(&v); err != nil {
			return fmt.Errorf("setting %s: %w", name, err)
		}
		settings = append(settings, name+"="+v)
	}
	fmt.Fprintf(out, "server: %s (the same for both: one server, one database)\n", strings.Join(settings, " "))
	fmt.Fprintf(out, "%s jobs per round, %d rounds each, alternating; %d handlers at once in each client; the drain is timed\n",
		commas(int64(b.o.Items)), b.o.Rounds, b.o.Concurrency)
	fmt.Fprintf(out, "river:  %s\n", riverDescription(b))
	fmt.Fprintf(out, "plenum: %s\n\n", plenumDescription(b))
	return nil
}

// results are the rounds' rates, jobs per second.
type results struct{ river, plenum []float64 }

// ratios pairs each Plenum round with the River round before it.
func (r results) ratios() []float64 {
	out := make([]float64, 0, len(r.plenum))
	for i := range min(len(r.river), len(r.plenum)) {
		out = append(out, r.plenum[i]/r.river[i])
	}
	return out
}

// rounds runs the alternating rounds, printing each.
func (b *bench) rounds(ctx context.Context, out io.Writer) (results, error) {
	var r results
	for i := range b.o.Rounds {
		if b.o.Only != "plenum" {
			d, tx, err := b.counted(ctx, func() (time.Duration, error) { return b.riverRound(ctx) })
			if err != nil {
				return r, fmt.Errorf("river round %d: %w", i+1, err)
			}
			r.river = append(r.river, float64(b.o.Items)/d.Seconds())
			fmt.Fprintf(out, "round %d  river   %10s jobs/s  (%v, %.2f transactions a job)\n", i+1, rate(r.river[i]), d.Round(time.Millisecond), tx)
		}
		if b.o.Only != "river" {
			d, tx, err := b.counted(ctx, func() (time.Duration, error) { return b.plenumRound(ctx, i) })
			if err != nil {
				return r, fmt.Errorf("plenum round %d: %w", i+1, err)
			}
			r.plenum = append(r.plenum, float64(b.o.Items)/d.Seconds())
			fmt.Fprintf(out, "round %d  plenum  %10s jobs/s  (%v, %.2f transactions a job)", i+1, rate(r.plenum[i]), d.Round(time.Millisecond), tx)
			if len(r.river) > i {
				fmt.Fprintf(out, "  plenum/river %.2f", r.plenum[i]/r.river[i])
			}
			fmt.Fprintln(out)
		}
	}
	return r, nil
}

// counted runs round and returns its drain's duration with the
// transactions the database committed per job meanwhile (the insert and
// setup included; pg_stat_database, which counts every session's, so
// other work on the server shows too).
func (b *bench) counted(ctx context.Context, round func() (time.Duration, error)) (time.Duration, float64, error) {
	commits := func() (int64, error) {
		// The statistics are a snapshot per transaction: clear it to
		// read fresh counts.
		if _, err := b.db.ExecContext(ctx, "SELECT pg_stat_clear_snapshot()"); err != nil {
			return 0, err
		}
		var n int64
		err := b.db.QueryRowContext(ctx, "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()").Scan(&n)
		return n, err
	}
	before, err := commits()
	if err != nil {
		return 0, 0, fmt.Errorf("count transactions: %w", err)
	}
	d, err := round()
	if err != nil {
		return 0, 0, err
	}
	after, err := commits()
	if err != nil {
		return 0, 0, fmt.Errorf("count transactions: %w", err)
	}
	return d, float64(after-before) / float64(b.o.Items), nil
}

// median of xs (0 for none).
func median(xs []float64) float64 {
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

func rate(x float64) string { return commas(int64(x + 0.5)) }

// commas writes n with thousands separators.
func commas(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + commas(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// randomTag is a short random lower-case hex string for names.
func randomTag() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
