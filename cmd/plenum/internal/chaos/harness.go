package chaos

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os/exec"
	"sync"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/skipprobe"
	"github.com/plenumdb/plenum/migrations"
)

// Config is one round.
type Config struct {
	// Dialect and DSN name the database (for SQLite, DSN is a file path).
	Dialect, DSN string
	// Prefix is the round's table prefix. Default: "chaos_" and a random
	// tag, so that rounds never share tables.
	Prefix string
	// Workers is how many worker processes run at once; Slots how many
	// handlers each runs at once. Defaults 4 and 8.
	Workers, Slots int
	// Duration is how long faults are injected. Default 1 min.
	Duration time.Duration
	// Drain bounds how long the workload may take to finish once the
	// faults stopped, before the check runs anyway. Default 2 min.
	Drain time.Duration
	// Plan is the workload. Default DefaultPlan().
	Plan Plan
	// Refill seeds another generation of the plan whenever fewer than
	// a quarter of a generation's items are left to run, for as long as faults
	// are injected: the workers are kept busy however long the round.
	Refill bool
	// Timing is the runtime's timing. Default DefaultTiming().
	Timing Timing
	// Faults says what to inflict.
	Faults Faults
	// Command returns a new, unstarted process of a program that runs
	// RunWorker when WorkerFromEnv says so (this program, started again).
	// Run sets its environment and output. Required.
	Command func() *exec.Cmd
	// Log receives the round's progress. Default: discard.
	Log io.Writer
	// Seed seeds the choice of faults. 0 picks one.
	Seed uint64
	// Keep leaves the round's tables in place after a round that passed
	// (those of a round that failed are always left, for inspection).
	Keep bool
	// Private runs the round on a database server of its own, started
	// for it and removed after it (internal/testkit/privatedb), instead
	// of on DSN, which is then ignored: a PostgreSQL 15 cluster for the
	// postgres dialect, a MariaDB server for mysql. It needs Linux, root
	// and the servers' programs (and ip and nft for partitions). The
	// faults of the network and the server (Faults.PartitionEvery,
	// RestartEvery, Failover) need it: they are never inflicted on a
	// server others use. The round's tables go with the server, even
	// after a round that failed.
	Private bool
}

// Faults is what a round inflicts while it lasts. A zero interval turns
// that fault off.
type Faults struct {
	// KillEvery is the mean time between SIGKILLs of a random worker.
	KillEvery time.Duration
	// DropEvery is the mean time between drops of some of a random
	// worker's database sessions (not on SQLite, which has none).
	DropEvery time.Duration
	// StallEvery is the mean time between SIGSTOPs of a random worker,
	// resumed (SIGCONT) after Stall, by default long enough for it to
	// have been counted dead and its claims taken by others.
	StallEvery time.Duration
	Stall      time.Duration
	// Skewed is how many worker slots run with their application clock
	// Skew off (alternately ahead and behind).
	Skewed int
	Skew   time.Duration
	// Points are the fault rules the workers run with while faults last
	// (see FaultPoints): kills at the injection points.
	Points string
	// PartitionEvery is the mean time between silent network partitions
	// of worker processes from the database (each slot's processes run in
	// a network namespace of their own, whose packets are dropped: no
	// reset, no error), in turns of three: one worker cut off for
	// Partition, one for half the stale threshold, and every worker but
	// one (every worker reaps: the reapers too) for Partition. Partition
	// defaults to the stale threshold and half a lease. Private only.
	PartitionEvery, Partition time.Duration
	// RestartEvery is the mean time between restarts of the database
	// server, by a fast and an immediate shutdown in turn. Private only.
	RestartEvery time.Duration
	// Failover, FailoverSync or FailoverAsync, runs PostgreSQL with a
	// streaming standby of that kind, which the workers' DSN names after
	// the primary (target_session_attrs=read-write), and fails over once,
	// halfway through the faults: the standby stops receiving, two
	// seconds later the primary is killed and the standby promoted.
	// Private only. After an asynchronous failover a unit acknowledged
	// before it and again after it is a re-run (Result.ReRuns): the
	// documented at-least-once delivery of that mode, not a violation.
	Failover string
}

// network reports whether f inflicts faults of the network or the server.
func (f Faults) network() bool {
	return f.PartitionEvery > 0 || f.RestartEvery > 0 || f.Failover != ""
}

// DefaultFaults inflicts a fault of each kind every few seconds and
// skews one worker's clock by three hours.
func DefaultFaults() Faults {
	return Faults{KillEvery: 7 * time.Second, DropEvery: 5 * time.Second, StallEvery: 15 * time.Second,
		Skewed: 1, Skew: 3 * time.Hour, Points: DefaultPoints()}
}

// Result is what a round did and what the check found.
type Result struct {
	// Dialect, Prefix, Seed, Workers and Slots are the round's settings.
	Dialect, Prefix string
	Seed            uint64
	Workers, Slots  int
	// Killed counts the harness's SIGKILLs, PointKills the workers that
	// killed themselves at an injection point, Exits the workers that
	// ended otherwise before their time (an error: see the log).
	Killed, PointKills, Exits int
	// Fired counts the faults that fired at each injection point: the
	// kills (read from the workers' last words) and, from the workers that
	// stopped gracefully, the other rules.
	Fired map[string]int
	// Dropped counts the sessions ended, in DropRounds attempts.
	Dropped, DropRounds int
	// Stalls counts SIGSTOPs; Stalled their total length.
	Stalls  int
	Stalled time.Duration
	// OwnersLost counts the workers that learned they had been reaped
	// (after a stall, mostly) and were replaced by new owners.
	OwnersLost int
	// Skewed lists the slots run with the clock Skew off.
	Skewed []int
	Skew   time.Duration
	// Processes counts the worker processes started.
	Processes int
	// Generations is how many generations of the plan were seeded.
	Generations int
	// Faulted, Drained and Checked are the lengths of the three phases.
	Faulted, Drained, Checked time.Duration
	// DrainTimedOut is set when the workload did not finish within Drain.
	DrainTimedOut bool
	// Plan is the workload as seeded, generations counted.
	Plan Plan
	// SampledPeak is the most items of one key under the concurrency
	// limit seen claimed at once while the round ran; SampledOver says
	// when it was more than the limit (a violation of InvConcurrency).
	SampledPeak int
	SampledOver []string
	// Partitions, Restarts and Failovers are the faults of the network
	// and the server, in order.
	Partitions, Restarts, Failovers []Event
	// Acked counts the completions the workers saw acknowledged (a fence
	// that returned nil, with its audit row); ReRuns the units
	// acknowledged twice across a failover to an asynchronous standby,
	// which lost the first.
	Acked, ReRuns int64
	// Findings is what the check found (nil when it did not run).
	Findings *Findings
}

// OK reports whether the round found nothing wrong.
func (r *Result) OK() bool { return r.Findings != nil && r.Findings.OK() }

func (c *Config) defaults() error {
	if c.Command == nil {
		return errors.New("chaos: Config.Command is required")
	}
	if c.Prefix == "" {
		var b [4]byte
		_, _ = rand.Read(b[:])
		c.Prefix = "chaos_" + hex.EncodeToString(b[:]) + "_"
	}
	if err := migrations.ValidatePrefix(c.Prefix); err != nil {
		return fmt.Errorf("chaos: prefix: %w", err)
	}
	if c.Workers == 0 {
		c.Workers = 4
	}
	if c.Slots == 0 {
		c.Slots = 8
	}
	if c.Workers < 1 || c.Slots < 1 || c.Slots > core.MaxClaimLimit {
		return fmt.Errorf("chaos: %d workers of %d slots: want at least one of each", c.Workers, c.Slots)
	}
	if c.Duration == 0 {
		c.Duration = time.Minute
	}
	if c.Drain == 0 {
		c.Drain = 2 * time.Minute
	}
	if c.Plan == (Plan{}) {
		c.Plan = DefaultPlan()
	}
	if err := c.Plan.Validate(); err != nil {
		return err
	}
	if c.Timing == (Timing{}) {
		c.Timing = DefaultTiming()
	}
	switch c.Faults.Failover {
	case "", FailoverSync, FailoverAsync:
	default:
		return fmt.Errorf("chaos: failover %q: want %q or %q", c.Faults.Failover, FailoverSync, FailoverAsync)
	}
	if c.Faults.network() && !c.Private {
		return errors.New("chaos: partitions, restarts and failovers need a private server (Config.Private): never the shared ones")
	}
	if c.Faults.Partition == 0 {
		c.Faults.Partition = c.Timing.StaleAfter + c.Timing.Timeout/2
	}
	if c.Faults.Stall == 0 {
		// Long enough to be reaped, and for a claim taken before the
		// pause to time out: the worker comes back stale.
		c.Faults.Stall = c.Timing.StaleAfter + c.Timing.Timeout/2
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	if c.Seed == 0 {
		c.Seed = mrand.Uint64()
	}
	return nil
}

// round is one Run in progress.
type round struct {
	logMu sync.Mutex
	cfg   Config
	d     dialect.Dialect
	db    *sql.DB
	store *core.Store
	mark  string
	rnd   *mrand.Rand
	start time.Time

	pv   *private // the round's own servers, or nil
	acks acks

	mu    sync.Mutex
	res   *Result
	procs map[*proc]bool // running worker processes
	// killedAt and promotedAt are when a failover killed the primary and
	// when it had promoted the standby; reseed is set when a generation's
	// seeding may be partly lost (an error, a failover).
	killedAt, promotedAt time.Time
	reseed               bool
}

// Run runs one round: seed, faults for cfg.Duration, drain, check. It
// returns an error when the round could not be run; a round that ran
// returns its Result, whose Findings say whether it passed.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	reg, err := dialect.Registered(cfg.Dialect)
	if err != nil {
		return nil, fmt.Errorf("chaos: %w", err)
	}
	start := time.Now()
	var pv *private
	if cfg.Private {
		logf := func(format string, args ...any) {
			fmt.Fprintf(cfg.Log, "%6.1fs  %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
		}
		if pv, err = startPrivate(cfg, logf); err != nil {
			return nil, err
		}
		defer pv.close()
		cfg.DSN = pv.dsn
	}
	db, err := reg.Open(cfg.DSN)
	if err != nil {
		return nil, fmt.Errorf("chaos: open: %w", err)
	}
	defer db.Close()
	r := &round{cfg: cfg, d: reg.Dialect, db: db, mark: "plenum-" + cfg.Prefix[:len(cfg.Prefix)-1], rnd: mrand.New(mrand.NewPCG(cfg.Seed, cfg.Seed>>1|1)),
		procs: map[*proc]bool{}, start: start, pv: pv,
		res: &Result{Dialect: cfg.Dialect, Prefix: cfg.Prefix, Seed: cfg.Seed, Workers: cfg.Workers, Slots: cfg.Slots,
			Skew: cfg.Faults.Skew, Plan: cfg.Plan, Fired: map[string]int{}}}
	if r.store, err = core.Open(ctx, db, reg.Dialect, core.Options{Prefix: cfg.Prefix, Migrate: true}); err != nil {
		return nil, fmt.Errorf("chaos: open the store: %w", err)
	}
	if err := createAudit(ctx, db, reg.Dialect, cfg.Prefix); err != nil {
		return nil, err
	}
	r.logf("round on %s, tables %s*, seed %d: %d workers of %d slots, faults for %v", cfg.Dialect, cfg.Prefix, cfg.Seed, cfg.Workers, cfg.Slots, cfg.Duration)
	gens := cfg.Plan.gens()
	for g := range gens {
		if err := seed(ctx, r.store, cfg.Plan, g); err != nil {
			return nil, err
		}
	}
	r.res.Generations = gens
	if err := r.run(ctx); err != nil {
		return r.res, err
	}
	plan := cfg.Plan
	plan.Generations = r.res.Generations
	r.res.Plan = plan
	t := time.Now()
	f, err := Check(ctx, db, reg.Dialect, cfg.Prefix, plan, cfg.Timing.StaleAfter)
	r.res.Checked = time.Since(t)
	if err != nil {
		return r.res, err
	}
	for i, over := range r.res.SampledOver {
		if i == maxExamples {
			f.Violations = append(f.Violations, Violation{Invariant: InvConcurrency, Detail: fmt.Sprintf("... and %d more samples over the limit", len(r.res.SampledOver)-i)})
			break
		}
		f.Violations = append(f.Violations, Violation{Invariant: InvConcurrency, Detail: over + ", over its limit of " + fmt.Sprint(plan.FlowLimit)})
	}
	r.mu.Lock()
	lossy := cfg.Faults.Failover == FailoverAsync && !r.promotedAt.IsZero()
	r.res.Acked, r.res.ReRuns = r.acks.judge(f, lossy, r.killedAt, r.promotedAt)
	r.mu.Unlock()
	r.res.Findings = f
	if f.OK() && !cfg.Keep {
		if err := errors.Join(dropAudit(ctx, db, cfg.Prefix), migrations.Drop(ctx, db, reg.Dialect, cfg.Prefix)); err != nil {
			return r.res, err
		}
	}
	return r.res, nil
}

// logf writes one line of the round's log; its supervisors write from
// goroutines of their own.
func (r *round) logf(format string, args ...any) {
	r.logMu.Lock()
	defer r.logMu.Unlock()
	fmt.Fprintf(r.cfg.Log, "%6.1fs  %s\n", time.Since(r.start).Seconds(), fmt.Sprintf(format, args...))
}

// run is the faults phase, then the drain.
func (r *round) run(ctx context.Context) error {
	cfg := r.cfg
	skewed := map[int]time.Duration{}
	for i := range min(cfg.Faults.Skewed, cfg.Workers) {
		slot := cfg.Workers - 1 - i
		skewed[slot] = cfg.Faults.Skew
		if i%2 == 1 {
			skewed[slot] = -cfg.Faults.Skew
		}
		r.res.Skewed = append(r.res.Skewed, slot)
	}
	spec := func(slot int, faults bool) WorkerSpec {
		s := WorkerSpec{Dialect: cfg.Dialect, DSN: markDSN(cfg.Dialect, cfg.DSN, r.mark), Prefix: cfg.Prefix, Slot: slot, Slots: cfg.Slots,
			Skew: skewed[slot], Plan: cfg.Plan, Timing: cfg.Timing}
		if faults {
			s.Faults, s.Periodic = cfg.Faults.Points, true
		}
		return s
	}

	// The claims of the keys under the concurrency limit are sampled
	// until the drain ends.
	sampling, endSampling := context.WithCancel(ctx)
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() { defer sampler.Done(); r.sampleFlow(sampling) }()
	defer func() { endSampling(); sampler.Wait() }()

	// Faults.
	phase, endPhase := context.WithCancel(ctx)
	var sup sync.WaitGroup
	for slot := range cfg.Workers {
		sup.Add(1)
		go func() { defer sup.Done(); r.supervise(phase, spec(slot, true)) }()
	}
	r.inflict(phase, cfg.Duration)
	endPhase()
	sup.Wait()
	r.res.Faulted = time.Since(r.start)
	r.logf("faults stopped: %d killed, %d killed at injection points, %d sessions dropped, %d stalls, %d owners lost, %d partitions, %d restarts, %d failovers; draining",
		r.res.Killed, r.res.PointKills, r.res.Dropped, r.res.Stalls, r.res.OwnersLost, len(r.res.Partitions), len(r.res.Restarts), len(r.res.Failovers))
	if ctx.Err() != nil {
		return ctx.Err()
	}
	r.seedAgain(ctx)

	// Drain: fresh workers without faults or periodic work, until no item
	// is left to run.
	t := time.Now()
	drain, endDrain := context.WithCancel(ctx)
	for slot := range cfg.Workers {
		sup.Add(1)
		go func() { defer sup.Done(); r.supervise(drain, spec(slot, false)) }()
	}
	deadline := time.Now().Add(cfg.Drain)
	poll := 500 * time.Millisecond
	if cfg.Plan.Items() > 100000 {
		poll = 3 * time.Second // counting is a scan of a large table
	}
	for {
		left, err := r.left(ctx)
		if err != nil {
			r.logf("drain: %v", err)
		} else if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			r.res.DrainTimedOut = true
			r.logf("drain: %d items still to run after %v", left, cfg.Drain)
			break
		}
		sleep(ctx, poll)
		if ctx.Err() != nil {
			break
		}
	}
	endDrain()
	sup.Wait()
	r.res.Drained = time.Since(t)
	r.logf("drained in %.1fs", r.res.Drained.Seconds())
	return ctx.Err()
}

// left counts the workload's items not yet finished. The rows of a
// skip-locked probe whose worker was killed mid-probe are not the
// workload's: they stay available until a later probe deletes them as
// leftovers (skipprobe.LeftoverAge), long after the drain.
func (r *round) left(ctx context.Context) (int64, error) {
	var n int64
	err := r.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+migrations.NamesFor(r.cfg.Prefix).Items+
		" WHERE state IN ('available', 'claimed') AND queue <> '"+notWorkload+"'").Scan(&n)
	return n, err
}

// notWorkload is the queue of the rows in the items table that are not
// the workload's.
const notWorkload = skipprobe.Queue

// inflict injects faults until d has passed or ctx ends.
func (r *round) inflict(ctx context.Context, d time.Duration) {
	f := r.cfg.Faults
	end := time.Now().Add(d)
	next := func(mean time.Duration) time.Time {
		if mean <= 0 {
			return end.Add(time.Hour)
		}
		return time.Now().Add(time.Duration(r.rnd.ExpFloat64() * float64(mean)))
	}
	kill, drop, stall := next(f.KillEvery), next(f.DropEvery), next(f.StallEvery)
	part, restart, failover := next(f.PartitionEvery), next(f.RestartEvery), end.Add(time.Hour)
	if f.Failover != "" {
		failover = time.Now().Add(d / 2)
	}
	// The faults of the network and the server run beside the others: a
	// restart or a failover takes seconds, a partition lasts a while.
	var server sync.WaitGroup
	serverBusy := make(chan struct{}, 1) // one restart or failover at a time
	cut := map[int]bool{}                // slots cut off now; r.mu guards it
	var parts sync.WaitGroup
	defer parts.Wait()
	defer server.Wait()
	onServer := func(fn func()) bool {
		select {
		case serverBusy <- struct{}{}:
			server.Add(1)
			go func() { defer server.Done(); defer func() { <-serverBusy }(); fn() }()
			return true
		default: // the last one is still under way
			return false
		}
	}
	killer := killerFor(r.cfg.Dialect, r.mark)
	progress := time.Now().Add(10 * time.Second)
	var stalls sync.WaitGroup
	defer stalls.Wait()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := time.Now()
		if now.After(end) {
			return
		}
		if now.After(kill) {
			kill = next(f.KillEvery)
			if p := r.pick(false); p != nil && p.kill() {
				r.count(func(res *Result) { res.Killed++ })
			}
		}
		if now.After(drop) {
			drop = next(f.DropEvery)
			if p := r.pick(false); p != nil && killer != nil {
				r.dropSessions(ctx, killer, p)
			}
		}
		if now.After(stall) {
			stall = next(f.StallEvery)
			if p := r.pick(true); p != nil && p.stop() {
				r.count(func(res *Result) { res.Stalls++; res.Stalled += f.Stall })
				stalls.Add(1)
				go func() {
					defer stalls.Done()
					sleep(context.WithoutCancel(ctx), f.Stall)
					p.cont()
				}()
			}
		}
		if now.After(part) {
			part = next(f.PartitionEvery)
			r.partition(ctx, &parts, cut)
		}
		// The failover comes first: once it is due, no restart starts
		// before it, and it waits for one under way.
		if now.After(failover) && onServer(func() { r.failover(ctx) }) {
			failover = end.Add(time.Hour)
		}
		if now.After(restart) {
			restart = next(f.RestartEvery)
			if !now.After(failover) {
				onServer(r.restart)
			}
		}
		if now.After(progress) {
			progress = now.Add(10 * time.Second)
			r.progress(ctx)
			// No refill in the last quarter: the drain should not start
			// with a fresh generation.
			if r.cfg.Refill && end.Sub(now) > d/4 {
				r.refill(ctx)
			}
		}
	}
}

// dropSessions ends one to three of p's database sessions.
func (r *round) dropSessions(ctx context.Context, k sessionKiller, p *proc) {
	ports, err := socketPorts(p.pid())
	if err != nil || len(ports) == 0 {
		return
	}
	n, err := k.kill(ctx, r.db, ports, 1+r.rnd.IntN(3))
	if err != nil {
		r.logf("drop sessions of worker %d: %v", p.slot, err)
	}
	r.count(func(res *Result) { res.DropRounds++; res.Dropped += n })
}

// refill seeds the next generation when less than a quarter of one is
// left.
func (r *round) refill(ctx context.Context) {
	left, err := r.left(ctx)
	if err != nil || left > r.cfg.Plan.Items()/int64(r.cfg.Plan.gens())/4 {
		return
	}
	// The generation counts from the first attempt on: a seeding that
	// fails part-way is finished before the drain (seedAgain).
	g := r.res.Generations
	r.count(func(res *Result) { res.Generations = g + 1 })
	if err := seed(ctx, r.store, r.cfg.Plan, g); err != nil {
		r.logf("refill: %v", err)
		r.count(func(*Result) { r.reseed = true })
		return
	}
	r.logf("seeded generation %d", g+1)
}

// seedAgain seeds every generation again where one's seeding may be
// partly lost (a refill that failed in a restart, an asynchronous
// failover): seeding again is a no-op for every item already there, and
// the client's answer to a write it cannot know was kept.
func (r *round) seedAgain(ctx context.Context) {
	r.mu.Lock()
	again, gens := r.reseed, r.res.Generations
	r.mu.Unlock()
	if !again {
		return
	}
	for g := 0; g < gens && ctx.Err() == nil; {
		if err := seed(ctx, r.store, r.cfg.Plan, g); err != nil {
			r.logf("seed generation %d again: %v", g+1, err)
			sleep(ctx, time.Second)
			continue
		}
		g++
	}
	r.logf("seeded the %d generations again", gens)
}

// progress logs where the round stands.
func (r *round) progress(ctx context.Context) {
	counts, err := r.store.Counts(ctx, queue)
	if err != nil {
		r.logf("progress: %v", err)
		return
	}
	r.mu.Lock()
	res := *r.res
	r.mu.Unlock()
	r.logf("%d completed, %d available, %d claimed; %d killed, %d at injection points, %d sessions dropped, %d stalls, %d owners lost, %d partitions, %d restarts, %d failovers",
		counts[core.StateCompleted], counts[core.StateAvailable], counts[core.StateClaimed], res.Killed, res.PointKills, res.Dropped, res.Stalls, res.OwnersLost,
		len(res.Partitions), len(res.Restarts), len(res.Failovers))
}

func (r *round) count(fn func(*Result)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fn(r.res)
}

// pick returns a random running worker; with running set, only one not
// paused.
func (r *round) pick(running bool) *proc {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ps []*proc
	for p := range r.procs {
		if !running || !p.isStopped() {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		return nil
	}
	// Map order is random but not uniform; choose by index.
	return ps[r.rnd.IntN(len(ps))]
}
