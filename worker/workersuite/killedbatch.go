package workersuite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/fault"
	"github.com/plenumdb/plenum/internal/testkit/crashtest"
	"github.com/plenumdb/plenum/internal/testkit/stoptest"
	"github.com/plenumdb/plenum/worker"
)

// The environment that makes the test binary the batch worker to kill.
const (
	batchCrashDSNEnv    = "PLENUM_BATCHCRASH_DSN"
	batchCrashPrefixEnv = "PLENUM_BATCHCRASH_PREFIX"
)

const (
	batchCrashQueue = "crash-batch"
	batchCrashKind  = "mail"
	batchCrashSize  = 5
	// batchCrashItems are three batches, all taken by the first claim.
	batchCrashItems = 3 * batchCrashSize
)

// batchCrashConfig is what both processes' workers run with.
func batchCrashConfig(store *core.Store, hooks worker.Hooks, reap time.Duration) worker.Config {
	cfg := crashConfig(store, hooks, reap)
	cfg.Queues = map[string]worker.QueueConfig{batchCrashQueue: {MaxWorkers: batchCrashItems}}
	return cfg
}

// RunKilledBatch is the killed batch worker test: see runKilledBatch.
// As with RunKilled, t must be a top-level test, and RunKilledBatch its
// first call but for building cfg.
func RunKilledBatch(t *testing.T, cfg KilledConfig) {
	if cfg.Dialect == nil || cfg.Open == nil || cfg.DSN == nil {
		t.Fatal("workersuite: KilledConfig needs a Dialect, an Open and a DSN")
	}
	runKilledBatch(t, cfg)
}

// runKilledBatch starts a worker process with a batch handler and
// SIGKILLs it mid-batch: its first claim takes three batches; one of them
// has committed its outcomes (four completed, one dead), one is killed
// inside the transaction that writes its outcomes (its dead item's failed
// attempt already written there), and one inside its handler. A worker in
// this process, with its reaper, then finishes: nothing is lost (every
// item the dead process held completes, each its claim released as a
// crash), nothing is completed twice (no item the dead process finished
// runs again), and nothing of the killed transaction remains (its dead
// item completes at attempt 1 with no failed attempt in its history).
func runKilledBatch(t *testing.T, cfg KilledConfig) {
	if dsn := os.Getenv(batchCrashDSNEnv); dsn != "" {
		err := batchCrashWorker(cfg, dsn, os.Getenv(batchCrashPrefixEnv))
		fmt.Fprintln(os.Stderr, "batch crash worker:", err)
		os.Exit(2)
	}
	t.Parallel()
	dsn := cfg.DSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	db, err := cfg.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	store, prefix, _ := crashtest.AuditedStore(ctx, t, db, cfg.Dialect, "item")
	specs := make([]core.ItemSpec, batchCrashItems)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: batchCrashQueue, Kind: batchCrashKind, Payload: []byte(fmt.Sprint(i)), Priority: i}
	}
	enqueued, err := store.Enqueue(ctx, specs...)
	if err != nil {
		t.Fatal(err)
	}

	proc := crashtest.Start(t, t.Name(), batchCrashDSNEnv+"="+dsn, batchCrashPrefixEnv+"="+prefix)
	line := proc.Await(t, 2*time.Minute, "holding its batches", func(line string) bool { return strings.HasPrefix(line, "holding ") })
	proc.Kill(t)

	items, err := store.Counts(ctx, batchCrashQueue)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killed worker pid %d (%s): %v", proc.Pid(), line, items)
	held := 2 * batchCrashSize
	if items[core.StateCompleted] != batchCrashSize-1 || items[core.StateDead] != 1 || items[core.StateClaimed] != int64(held) {
		t.Fatalf("after the kill: %v; want one batch's outcomes (%d completed, 1 dead) and two batches held (%d claimed)", items, batchCrashSize-1, held)
	}
	finished := map[uuid.UUID]bool{} // by the dead process
	var claimed []uuid.UUID
	for _, r := range enqueued {
		it, err := store.Get(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if it.State.Terminal() {
			finished[it.ID] = true
		} else {
			claimed = append(claimed, it.ID)
		}
	}

	// The survivor: a worker of this process, with its reaper.
	var crashed atomic.Int64
	var mu sync.Mutex
	handled := map[uuid.UUID]int{}
	completed := map[uuid.UUID]int{}
	later := survivorStore(ctx, t, store)
	w, err := worker.New(later, batchCrashConfig(later, worker.HookFunc(func(_ context.Context, e worker.Event) {
		switch e.Kind {
		case worker.EventReaped:
			crashed.Add(int64(e.Reap.Crashed))
		case worker.EventCompleted:
			mu.Lock()
			completed[e.Item.ID]++
			mu.Unlock()
		}
	}), 300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	worker.HandleBatch(w, batchCrashKind, func(ctx context.Context, jobs []*worker.Job[int]) error {
		mu.Lock()
		defer mu.Unlock()
		for _, job := range jobs {
			handled[job.ID()]++
		}
		return nil
	}, worker.BatchConfig{MaxBatch: batchCrashSize})
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for {
		c, err := store.Counts(ctx, batchCrashQueue)
		if err != nil {
			t.Fatal(err)
		}
		if c[core.StateCompleted] == batchCrashItems-1 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the survivor did not finish: %v", c)
		}
		survivorRuns(t, w)
		time.Sleep(50 * time.Millisecond)
	}
	if err := stoptest.Stop(t, w.Stop, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for id := range finished {
		if handled[id] > 0 || completed[id] > 0 {
			t.Errorf("item %s, finished by the killed process, ran again (%d) or completed again (%d)", id, handled[id], completed[id])
		}
	}
	for _, id := range claimed {
		if handled[id] != 1 || completed[id] != 1 {
			t.Errorf("item %s, held by the killed process: handled %d times and completed %d times by the survivor, want once", id, handled[id], completed[id])
		}
		it, err := store.Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if it.State != core.StateCompleted || it.Attempt != 1 || it.CrashCount != 1 {
			t.Errorf("item %s: %s at attempt %d with %d crashes; want completed at attempt 1 (a crash uses none) with 1 crash", id, it.State, it.Attempt, it.CrashCount)
		}
		h, err := store.Attempts(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != 1 || h[0].Outcome != core.OutcomeCrash {
			t.Errorf("item %s: history %+v, want its crash alone (the killed transaction's failed attempt rolled back)", id, h)
		}
	}
	if got := crashed.Load(); got != int64(held) {
		t.Errorf("the reaper released %d claims as crashes, want the %d the dead process held", got, held)
	}
}

// batchCrashWorker is the process to kill: a worker whose first claim
// takes three batches. The third to enter its handler waits there; the
// other two each mark their first item dead and the rest done, and write
// their outcomes: the first to reach the completions commits, the second
// waits inside its transaction, after its dead item's failed attempt.
// The process then says so on stdout and waits to be killed. It returns
// only when it fails to get there, so its error is never nil.
func batchCrashWorker(cfg KilledConfig, dsn, prefix string) error {
	db, err := cfg.Open(dsn)
	if err != nil {
		return err
	}
	store, err := core.Open(context.Background(), db, cfg.Dialect, core.Options{Prefix: prefix})
	if err != nil {
		return err
	}
	inTx := make(chan struct{})
	ctx := fault.With(context.Background(), fault.CompleteBeforeArrival, fault.Rule{Action: fault.Call, Skip: 1, Times: 1,
		Func: func(context.Context) error {
			close(inTx)
			select {} // inside the second batch's transaction, to be killed
		}})
	w, err := worker.New(store, batchCrashConfig(store, nil, -1))
	if err != nil {
		return err
	}
	var calls atomic.Int32
	third := make(chan struct{})
	worker.HandleBatch(w, batchCrashKind, func(ctx context.Context, jobs []*worker.Job[int]) error {
		if calls.Add(1) == 3 {
			close(third)
			select {} // held in the handler, to be killed
		}
		<-third
		first := jobs[0]
		for _, job := range jobs[1:] {
			if job.Args < first.Args {
				first = job
			}
		}
		first.Dead(errors.New("bounced"))
		return nil
	}, worker.BatchConfig{MaxBatch: batchCrashSize})
	if err := w.Start(ctx); err != nil {
		return err
	}
	<-inTx
	// The first batch's transaction passed the fault point before the
	// second met it, but may not have committed yet: on a loaded machine
	// the kill could come first.
	for {
		counts, err := store.Counts(context.Background(), batchCrashQueue)
		if err != nil {
			return err
		}
		if counts[core.StateCompleted] == batchCrashSize-1 && counts[core.StateDead] == 1 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	fmt.Println("holding two batches: one in its handler, one in its outcomes' transaction")
	select {}
}
