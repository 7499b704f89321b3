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
	o    options
	tag  string        // names River's schema and Plenum's prefixes
	pool *pgxpool.Pool // River's, opened as River's CLI opens it
	db   *sql.DB       // Plenum's, limited to as many connections
	// monitor reads the server's sessions for the CPU they spend.
	monitor *sql.DB
	schema  string // River's schema, once created
}

// open connects both clients to o.DSN and migrates River's schema.
func open(ctx context.Context, o options) (*bench, error) {
	b := &bench{o: o, tag: randomTag()}
	pool, err := openRiverPool(ctx, withAppName(o.DSN, riverAppName))
	if err != nil {
		return nil, err
	}
	b.pool = pool
	if b.db, err = postgres.Open(withAppName(o.DSN, plenumAppName)); err != nil {
		pool.Close()
		return nil, err
	}
	if b.monitor, err = postgres.Open(withAppName(o.DSN, monitorAppName)); err != nil {
		pool.Close()
		b.db.Close()
		return nil, err
	}
	b.monitor.SetMaxOpenConns(1)
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
	return errors.Join(err, b.db.Close(), b.monitor.Close())
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
	if b.o.Steady {
		fmt.Fprintln(out, steadyAbout(b.o))
	} else {
		fmt.Fprintf(out, "%s jobs per round, %d rounds each, alternating; %d handlers at once in each client; the drain is timed\n",
			commas(int64(b.o.Items)), b.o.Rounds, b.o.Concurrency)
	}
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

// drain is one round's measurement: how long the drain took and the CPU
// time the side spent on it, in its server sessions and in this process.
type drain struct {
	took           time.Duration
	server, client time.Duration
	cpuKnown       bool
}

// meter starts measuring a drain by the sessions named app; its stop
// ends it.
func (b *bench) meter(ctx context.Context, app string) (stop func() (drain, error), err error) {
	before, err := sampleCPU(ctx, b.monitor, app)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	return func() (drain, error) {
		d := drain{took: time.Since(start)}
		after, err := sampleCPU(ctx, b.monitor, app)
		if err != nil {
			return d, err
		}
		d.server, d.client, d.cpuKnown = cpuSpent(before, after)
		return d, nil
	}, nil
}

// line formats a round's result.
func (b *bench) line(d drain) string {
	s := fmt.Sprintf("%10s jobs/s  %8v", rate(float64(b.o.Items)/d.took.Seconds()), d.took.Round(time.Millisecond))
	if d.cpuKnown {
		per := func(x time.Duration) string {
			return fmt.Sprintf("%5.0f", float64(x.Milliseconds())*1000/float64(b.o.Items))
		}
		s += fmt.Sprintf("  cpu ms per 1,000 jobs: server %s client %s", per(d.server), per(d.client))
	}
	return s
}

// rounds runs the alternating rounds, printing each.
func (b *bench) rounds(ctx context.Context, out io.Writer) (results, error) {
	var r results
	for i := range b.o.Rounds {
		if b.o.Only != "plenum" {
			d, err := b.riverRound(ctx)
			if err != nil {
				return r, fmt.Errorf("river round %d: %w", i+1, err)
			}
			r.river = append(r.river, float64(b.o.Items)/d.took.Seconds())
			fmt.Fprintf(out, "round %d  river   %s\n", i+1, b.line(d))
		}
		if b.o.Only != "river" {
			d, err := b.plenumRound(ctx, i)
			if err != nil {
				return r, fmt.Errorf("plenum round %d: %w", i+1, err)
			}
			r.plenum = append(r.plenum, float64(b.o.Items)/d.took.Seconds())
			fmt.Fprintf(out, "round %d  plenum  %s", i+1, b.line(d))
			if len(r.river) > i {
				fmt.Fprintf(out, "  plenum/river %.2f", r.plenum[i]/r.river[i])
			}
			fmt.Fprintln(out)
		}
	}
	return r, nil
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
