package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/plenumdb/plenum/cmd/plenum/internal/chaos"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
	"github.com/plenumdb/plenum/sqlite"
)

const chaosAbout = `
Runs several worker processes (this program, started again) on one
database and injures them for --duration: SIGKILL at random times, kills
at the fault injection points (--faults), dropped database sessions
(PostgreSQL and MySQL/MariaDB; only the round's own), pauses with SIGSTOP
past their lease, and an application clock hours off in some of them.
Then the faults stop, fresh workers drain the workload (chains, large
fan-outs and their joins, retried failures, periodic ticks), and an
invariant checker reads the tables: every item terminal, every unit done
exactly once, every barrier fired once with every child seen, no claim
held by a dead owner, crash and attempt counts that add up, no flow key
over its concurrency or rate limit.

It prints what it did and what it found, and exits 1 on any violation
(the round's tables are then kept for inspection; --keep keeps them
always). The round works under its own table prefix and drops its
tables after a pass. Without --dsn, the sqlite dialect uses a new
temporary file.`

// chaosOptions configure a chaos round.
type chaosOptions struct {
	// Database names the database; with none, a temporary SQLite file.
	// Its Prefix is the round's own (default chaos_ and a random tag).
	cmdline.Database
	Workers, Slots  int
	Duration, Drain time.Duration
	Items           int
	Refill, Keep    bool
	Faults          chaos.Faults
	Seed            uint64
	StaleAfter      time.Duration
}

func runChaosCmd(ctx context.Context, e env, args []string) error {
	if spec, ok, err := chaos.WorkerFromEnv(); ok {
		if err != nil {
			return err
		}
		return chaos.RunWorker(ctx, spec, e.stdout)
	}
	o := chaosOptions{Workers: 4, Slots: 8, Duration: time.Minute, Drain: 2 * time.Minute, Faults: chaos.DefaultFaults()}
	fs := newFlags(e, "chaos", "chaos [--dialect NAME --dsn DSN] [flags]", chaosAbout)
	o.Register(fs, "", "to run on (default: a temporary SQLite file)")
	fs.StringVar(&o.Prefix, "prefix", "", "table name prefix (default chaos_ and a random tag)")
	fs.IntVar(&o.Workers, "workers", o.Workers, "worker processes at once")
	fs.IntVar(&o.Slots, "slots", o.Slots, "handlers each worker runs at once")
	fs.DurationVar(&o.Duration, "duration", o.Duration, "how long faults are injected")
	fs.DurationVar(&o.Drain, "drain", o.Drain, "how long the workload may take to finish after the faults, before the check")
	fs.IntVar(&o.Items, "items", 0, "size the workload at about this many items, seeded at once (default: a small workload seeded again whenever it runs low)")
	fs.BoolVar(&o.Keep, "keep", false, "keep the round's tables after a pass")
	fs.DurationVar(&o.Faults.KillEvery, "kill-every", o.Faults.KillEvery, "mean time between SIGKILLs of a random worker (0: none)")
	fs.DurationVar(&o.Faults.DropEvery, "drop-every", o.Faults.DropEvery, "mean time between drops of a worker's database sessions (0: none)")
	fs.DurationVar(&o.Faults.StallEvery, "stall-every", o.Faults.StallEvery, "mean time between SIGSTOPs of a random worker (0: none)")
	fs.DurationVar(&o.Faults.Stall, "stall", 0, "how long a stall lasts (default: past the stale threshold and half a lease)")
	fs.IntVar(&o.Faults.Skewed, "skewed", o.Faults.Skewed, "workers whose application clock is off by --skew")
	fs.DurationVar(&o.Faults.Skew, "skew", o.Faults.Skew, "how far the skewed workers' application clock is off")
	fs.StringVar(&o.Faults.Points, "faults", o.Faults.Points, "fault rules the workers run with while faults last, at the injection points")
	fs.DurationVar(&o.StaleAfter, "stale-after", 6*time.Second, "how long a silent worker counts as alive; heartbeats, leases and reaps scale with it")
	fs.Uint64Var(&o.Seed, "seed", 0, "seed of the faults' random choices (default: random, printed)")
	if err := cmdline.ParseFlags(fs, args); err != nil {
		return err
	}
	return runChaos(ctx, e, o)
}

// errViolations is a round that found broken invariants: exit status 1.
var errViolations = errors.New("chaos: the check found violations")

func runChaos(ctx context.Context, e env, o chaosOptions) error {
	r, dsn, err := o.Resolve(sqlite.Name)
	if err != nil {
		return err
	}
	if o.Prefix != "" {
		if err := o.CheckPrefix(); err != nil {
			return err
		}
	}
	switch {
	case o.Workers < 1 || o.Workers > 256:
		return cmdline.Usagef("--workers %d: want 1 to 256", o.Workers)
	case o.Slots < 1 || o.Slots > 1000:
		return cmdline.Usagef("--slots %d: want 1 to 1000", o.Slots)
	case o.Duration <= 0:
		return cmdline.Usagef("--duration %v: want more than zero", o.Duration)
	case o.Drain <= 0:
		return cmdline.Usagef("--drain %v: want more than zero", o.Drain)
	case o.StaleAfter < 3*time.Second || o.StaleAfter > 10*time.Minute:
		return cmdline.Usagef("--stale-after %v: want 3s to 10m", o.StaleAfter)
	case o.Items < 0:
		return cmdline.Usagef("--items %d: want zero or more", o.Items)
	}
	if dsn == "" { // a file dialect given no file
		dir, err := os.MkdirTemp("", "plenum-chaos-")
		if err != nil {
			return fmt.Errorf("chaos: temporary directory: %w", err)
		}
		defer os.RemoveAll(dir)
		dsn = filepath.Join(dir, "chaos.db")
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("chaos: find this program to start workers: %w", err)
	}
	cfg := chaos.Config{
		Dialect: r.Dialect.Name(), DSN: dsn, Prefix: o.Prefix, Workers: o.Workers, Slots: o.Slots,
		Duration: o.Duration, Drain: o.Drain, Faults: o.Faults, Seed: o.Seed, Keep: o.Keep,
		Command: func() *exec.Cmd { return exec.Command(self, "chaos") },
		Log:     e.stdout, Refill: o.Items == 0, Timing: chaos.TimingFor(o.StaleAfter),
	}
	if o.Items > 0 {
		cfg.Plan = chaos.LoadPlan(o.Items)
	}
	res, err := chaos.Run(ctx, cfg)
	if res != nil {
		res.Print(e.stdout)
	}
	if err != nil {
		return err
	}
	if !res.OK() {
		return errViolations
	}
	return nil
}
