// Command river measures Plenum's worker runtime against River
// (riverqueue/river, through its pgx v5 driver) on one PostgreSQL, side by
// side: each round inserts --items jobs, then times how long one client
// takes to drain them with a handler that does nothing. Rounds alternate
// (River, Plenum, River, ...), at least three each, and the last line is
// the median of Plenum's rate over River's:
//
//	go run . --dsn 'postgres://user@localhost:5432/db?sslmode=disable' --items 100000
//
// River runs as its own `river bench` configures it (printed at the start),
// in a schema of its own migrated with rivermigrate; Plenum runs with its
// defaults under a table prefix of its own. Both are dropped when the run
// ends. Only the drain is timed: from the client's Start returning to the
// last job's completion committed, as each client reports it (River's
// subscription, Plenum's hooks).
//
// With --steady it measures the steady state instead: a producer per
// client keeps about 4,000 jobs available while 64 handlers each work 1
// ms; each round's rate is the median of 5-second completion rates after
// a warm-up, printed with the pickup latency from insert to handler start
// (steady.go):
//
//	go run . --dsn 'postgres://user@localhost:5432/db?sslmode=disable' --steady --rounds 3
//
// It is a module of its own so that River is never a dependency of
// Plenum's users.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Stdout, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// options are the command line's settings.
type options struct {
	DSN    string
	Items  int
	Rounds int
	// Concurrency is how many handlers each client runs at once.
	Concurrency int
	// Timeout bounds one round's drain.
	Timeout time.Duration
	// Only, when not empty, runs that client's rounds alone ("plenum" or
	// "river"): for profiling one side.
	Only string
	// CPUProfile, when not empty, is the file Plenum's drains are
	// profiled into (runtime/pprof).
	CPUProfile string
	// Steady runs the steady state (steady.go) instead of the drain:
	// Warmup, then Measure, per round.
	Steady          bool
	Warmup, Measure time.Duration
}

func (o options) validate() error {
	switch {
	case o.DSN == "":
		return errors.New("--dsn is required: a PostgreSQL URL (postgres://user@host:5432/db?sslmode=disable)")
	case o.Items < 1:
		return fmt.Errorf("--items %d: want at least 1", o.Items)
	case o.Rounds < 1:
		return fmt.Errorf("--rounds %d: want at least 1", o.Rounds)
	case o.Concurrency < 1 || o.Concurrency > maxConcurrency:
		return fmt.Errorf("--concurrency %d: want 1 to %d", o.Concurrency, maxConcurrency)
	case o.Only != "" && o.Only != "plenum" && o.Only != "river":
		return fmt.Errorf("--only %q: want plenum or river", o.Only)
	case o.Timeout <= 0:
		return fmt.Errorf("--timeout %v: want more than zero", o.Timeout)
	case o.Steady && o.Warmup < 0:
		return fmt.Errorf("--warmup %v: want 0 or more", o.Warmup)
	case o.Steady && o.Measure <= 0:
		return fmt.Errorf("--measure %v: want more than zero", o.Measure)
	}
	return nil
}

// maxConcurrency is the most handlers either client is asked to run at
// once: River's limit for a queue's MaxWorkers.
const maxConcurrency = 10_000

func parse(args []string, out io.Writer) (options, error) {
	o := options{Items: 100_000, Rounds: 3, Concurrency: riverBenchWorkers, Timeout: 10 * time.Minute, Warmup: 30 * time.Second, Measure: 3 * time.Minute}
	fs := flag.NewFlagSet("river", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&o.DSN, "dsn", "", "PostgreSQL URL to measure on (required)")
	fs.IntVar(&o.Items, "items", o.Items, "jobs inserted and drained in each round")
	fs.IntVar(&o.Rounds, "rounds", o.Rounds, "rounds of each client, alternating")
	fs.IntVar(&o.Concurrency, "concurrency", o.Concurrency, "handlers each client runs at once (River's bench: 2,000; with --steady, 64 unless set)")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "bound on one round's drain")
	fs.StringVar(&o.Only, "only", "", "run only this client's rounds, plenum or river (no ratio)")
	fs.StringVar(&o.CPUProfile, "cpuprofile", "", "write a CPU profile of Plenum's drains to this file")
	fs.BoolVar(&o.Steady, "steady", false, "measure the steady state instead of the drain: a producer per client keeping about 4,000 jobs available, handlers of 1 ms")
	fs.DurationVar(&o.Warmup, "warmup", o.Warmup, "with --steady, each round's warm-up")
	fs.DurationVar(&o.Measure, "measure", o.Measure, "with --steady, each round's measured period, counted in windows of 5s")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.Steady {
		set := false
		fs.Visit(func(f *flag.Flag) { set = set || f.Name == "concurrency" })
		if !set {
			o.Concurrency = steadyHandlers
		}
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	return o, o.validate()
}

func run(ctx context.Context, out io.Writer, args []string) (err error) {
	o, err := parse(args, out)
	if err != nil {
		return err
	}
	b, err := open(ctx, o)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, b.close(context.WithoutCancel(ctx))) }()
	if err := b.describe(ctx, out); err != nil {
		return err
	}
	measure := b.rounds
	if o.Steady {
		measure = b.steadyRounds
	}
	rounds, err := measure(ctx, out)
	if err != nil {
		return err
	}
	fmt.Fprintln(out)
	if o.Only != "plenum" {
		fmt.Fprintf(out, "river  median %s jobs/s\n", rate(median(rounds.river)))
	}
	if o.Only != "river" {
		fmt.Fprintf(out, "plenum median %s jobs/s\n", rate(median(rounds.plenum)))
	}
	if o.Only == "" {
		fmt.Fprintf(out, "plenum/river = %.2f\n", median(rounds.ratios()))
	}
	return nil
}
