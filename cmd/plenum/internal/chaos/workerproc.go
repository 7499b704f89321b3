package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	_ "github.com/plenumdb/plenum/dialect/builtin" // any dialect by name
	"github.com/plenumdb/plenum/worker"
)

// WorkerEnv is the environment variable that makes a process a chaos
// worker: it holds the worker's WorkerSpec as JSON. A program that can
// be a worker checks it first (WorkerFromEnv) and, when set, runs
// RunWorker instead of what it would otherwise do.
const WorkerEnv = "PLENUM_CHAOS_WORKER"

// WorkerSpec is what one worker process runs.
type WorkerSpec struct {
	// Dialect, DSN and Prefix name the database and the round's tables.
	Dialect, DSN, Prefix string
	// Slot numbers the worker among the round's (0 up); a respawned
	// worker keeps its slot.
	Slot int
	// Slots is how many handlers run at once in the process.
	Slots int
	// Skew shifts the process's application clock: the workload reads
	// time from it. The database clock stays the only one that gates.
	Skew time.Duration
	// Faults are the fault rules the process runs with (see
	// FaultPoints), or "".
	Faults string
	// Periodic runs the plan's periodic schedule.
	Periodic bool
	// Plan is the round's workload, Timing the runtime's timing.
	Plan   Plan
	Timing Timing
}

// Timing is the runtime's timing in a round: short, so that stalls and
// kills are noticed within seconds. The fields are worker.Config's
// HeartbeatInterval, StaleAfter, ReapInterval and PollInterval, and the
// kinds' Timeout.
type Timing struct {
	Heartbeat, StaleAfter, Timeout, Reap, Poll time.Duration
}

// DefaultTiming notices a dead or stalled worker within about eight
// seconds. Heartbeats every second leave room for a loaded machine.
func DefaultTiming() Timing {
	return Timing{Heartbeat: time.Second, StaleAfter: 6 * time.Second, Timeout: 15 * time.Second, Reap: 2 * time.Second, Poll: 200 * time.Millisecond}
}

// TimingFor scales DefaultTiming to a stale threshold: heartbeats six
// times within it, leases two and a half times it, reaps three times
// within it.
func TimingFor(staleAfter time.Duration) Timing {
	return Timing{Heartbeat: staleAfter / 6, StaleAfter: staleAfter, Timeout: staleAfter * 5 / 2, Reap: staleAfter / 3, Poll: 200 * time.Millisecond}
}

// WorkerFromEnv returns the spec in WorkerEnv, and false when the
// variable is not set.
func WorkerFromEnv() (WorkerSpec, bool, error) {
	v := os.Getenv(WorkerEnv)
	if v == "" {
		return WorkerSpec{}, false, nil
	}
	var s WorkerSpec
	if err := json.Unmarshal([]byte(v), &s); err != nil {
		return s, true, fmt.Errorf("chaos: %s: %w", WorkerEnv, err)
	}
	return s, true, nil
}

// config is the worker configuration of spec.
func (spec WorkerSpec) config() worker.Config {
	t := spec.Timing
	cfg := worker.Config{
		Queues:            map[string]worker.QueueConfig{queue: {MaxWorkers: spec.Slots}, parentQueue: {MaxWorkers: parentSlots}},
		PollInterval:      t.Poll,
		HeartbeatInterval: t.Heartbeat,
		StaleAfter:        t.StaleAfter,
		ReapInterval:      t.Reap,
		RetainFor:         -1, // retention would delete the evidence
		// A round kills workers far more often than production would: no
		// item may be dead-lettered for it, or the workload could not
		// finish.
		MaxCrashes:  1000,
		DefaultKind: worker.KindConfig{Timeout: t.Timeout, Backoff: func(int) time.Duration { return 300 * time.Millisecond }},
		Host:        fmt.Sprintf("chaos-%d", spec.Slot),
	}
	if spec.Periodic && spec.Plan.TickEvery > 0 {
		cfg.Periodic = []worker.PeriodicJob{{Name: tickName, Every: spec.Plan.TickEvery, Item: core.ItemSpec{Queue: queue, Kind: kindTick}}}
		cfg.PeriodicInterval = 500 * time.Millisecond
	}
	return cfg
}

// RunWorker runs a worker process until ctx ends, then stops it
// gracefully. A worker that stops itself (it was reaped while paused, or
// could not heartbeat) is replaced by a new one under a new owner, as a
// supervisor would. It writes one line per such event to out.
func RunWorker(ctx context.Context, spec WorkerSpec, out io.Writer) error {
	if err := applyFaults(spec.Faults); err != nil {
		return err
	}
	r, err := dialect.Registered(spec.Dialect)
	if err != nil {
		return fmt.Errorf("chaos worker: %w", err)
	}
	// A process started while its database is restarting, failing over
	// or cut off from it tries again until it can open its store.
	var store *core.Store
	for {
		db, err := r.Open(spec.DSN)
		if err == nil {
			store, err = core.Open(ctx, db, r.Dialect, core.Options{Prefix: spec.Prefix})
			if err != nil {
				db.Close()
			}
		}
		if err == nil {
			defer db.Close()
			break
		}
		fmt.Fprintf(out, "open failed: %v\n", err)
		sleep(ctx, time.Second)
		if ctx.Err() != nil {
			return nil
		}
	}
	// A worker of spec.Slots handlers may need more than the dialect's
	// default pool: bound it at what it needs.
	worker.FitPool(store, spec.config())
	skew := spec.Skew
	wl := &workload{plan: spec.Plan, store: store, prefix: spec.Prefix, worker: spec.Slot, acks: &syncWriter{w: out},
		clock: func() time.Time { return time.Now().Add(skew) }}
	for ctx.Err() == nil {
		w, err := worker.New(store, spec.config())
		if err != nil {
			return fmt.Errorf("chaos worker: %w", err)
		}
		wl.register(w)
		if err := w.Start(ctx); err != nil {
			fmt.Fprintf(out, "start failed: %v\n", err)
			sleep(ctx, 200*time.Millisecond)
			continue
		}
		fmt.Fprintf(out, "started %s\n", w.Owner())
		select {
		case <-w.Done():
			fmt.Fprintf(out, "lost %s: %v\n", w.Owner(), w.Err())
		case <-ctx.Done():
			stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
			err := w.Stop(stop)
			cancel()
			if err != nil {
				fmt.Fprintf(out, "lost %s: %v\n", w.Owner(), err)
			}
			fmt.Fprintf(out, "stopped %s\n", w.Owner())
		}
	}
	reportFired(out)
	return nil
}

// syncWriter writes each line to w under a lock: handlers write their
// acknowledgements at once.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

// sleep waits for d or the end of ctx.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
