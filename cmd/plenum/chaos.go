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
temporary file.

With --private the round starts a database server of its own instead
(a PostgreSQL 15 cluster for --dialect postgres, a MariaDB server for
mysql; Linux, as root) and removes it afterwards, tables and all. Only
there does it injure the network and the server: silent partitions of
worker processes from the database, each slot in a network namespace
of its own whose packets are dropped (--partition-every; ip and nft),
restarts of the server by a fast and an immediate shutdown in turn
(--restart-every), and one PostgreSQL failover halfway through, to a
synchronous or asynchronous streaming standby (--failover). After an
asynchronous failover a completion the standby had not received runs
again: the round counts such re-runs apart and they are no violation
there; anywhere else a completion acknowledged twice is one.`

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
	Private         bool
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
	fs.BoolVar(&o.Private, "private", false, "run on a database server of the round's own (postgres or mysql; Linux, root), not --dsn")
	fs.DurationVar(&o.Faults.PartitionEvery, "partition-every", 0, "mean time between silent network partitions of workers from the database (--private; 0: none)")
	fs.DurationVar(&o.Faults.Partition, "partition", 0, "how long a long partition lasts (default: past the stale threshold and half a lease)")
	fs.DurationVar(&o.Faults.RestartEvery, "restart-every", 0, "mean time between restarts of the database server, fast and immediate in turn (--private; 0: none)")
	fs.StringVar(&o.Faults.Failover, "failover", "", "fail PostgreSQL over once to a standby: sync or async (--private)")
	fs.Uint64Var(&o.Seed, "seed", 0, "seed of the faults' random choices (default: random, printed)")
	if err := cmdline.ParseFlags(fs, args); err != nil {
		return err
	}
	return runChaos(ctx, e, o)
}

// errViolations is a round that found broken invariants: exit status 1.
var errViolations = errors.New("chaos: the check found violations")

func runChaos(ctx context.Context, e env, o chaosOptions) error {
	if o.Private && o.DSN != "" {
		return cmdline.Usagef("--private starts a server of its own: give no --dsn")
	}
	if !o.Private && (o.Faults.PartitionEvery > 0 || o.Faults.RestartEvery > 0 || o.Faults.Failover != "") {
		return cmdline.Usagef("--partition-every, --restart-every and --failover injure the server and the network: they need --private, never a shared server")
	}
	if o.Private {
		if o.Dialect != "postgres" && o.Dialect != "mysql" {
			return cmdline.Usagef("--private --dialect %q: want postgres or mysql", o.Dialect)
		}
		if o.Faults.Failover != "" && o.Faults.Failover != chaos.FailoverSync && o.Faults.Failover != chaos.FailoverAsync || o.Faults.Failover != "" && o.Dialect != "postgres" {
			return cmdline.Usagef("--failover %q: want sync or async, with --dialect postgres", o.Faults.Failover)
		}
	}
	name, dsn := o.Dialect, ""
	if !o.Private {
		r, d, err := o.Resolve(sqlite.Name)
		if err != nil {
			return err
		}
		name, dsn = r.Dialect.Name(), d
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
	if dsn == "" && !o.Private { // a file dialect given no file
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
		Dialect: name, DSN: dsn, Private: o.Private, Prefix: o.Prefix, Workers: o.Workers, Slots: o.Slots,
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
