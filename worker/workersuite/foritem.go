package workersuite

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/stoptest"
	"github.com/plenumdb/plenum/worker"
)

// itemTimeoutAndBackoff checks KindConfig.ForItem: an item it gives a
// Timeout shorter than its kind's is past its deadline at that Timeout,
// on the database clock (a Fence with a context that never ends, made
// once the clock has passed it, is refused with core.ErrPastDeadline and
// commits nothing), its attempt counts as a timeout, and the retry waits
// the item's Backoff (its available_at after the failure less the
// failure's time), while an item ForItem leaves alone keeps the kind's
// Timeout: its own late-looking wait does not time it out.
func itemTimeoutAndBackoff(e *env) {
	t := e.t
	const q = "peritem"
	audit := e.auditTable()
	short := e.enqueue(core.ItemSpec{Queue: q, Kind: "tuned", Payload: json.RawMessage(`"short"`), MaxAttempts: 2})[0]
	long := e.enqueue(core.ItemSpec{Queue: q, Kind: "tuned", Payload: json.RawMessage(`"long"`), MaxAttempts: 1})[0]
	cfg, kindTimeout := e.deadlineConfig(q)
	cfg.Queues[q] = worker.QueueConfig{MaxWorkers: 2}
	const itemTimeout = 2 * time.Second
	const retry = 1500 * time.Millisecond
	var mu sync.Mutex
	var lateErr error
	var waited time.Duration
	refused := make(chan struct{})
	e.start(cfg, func(w *worker.Worker) {
		w.HandleFunc("tuned", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
			bg := context.Background()
			if string(job.Args) == `"long"` {
				// Past the short item's Timeout on the database clock, but
				// within its own kind's: it completes.
				if err := e.awaitClockPast(job.ID(), itemTimeout); err != nil {
					return err
				}
				return job.Fence(bg, func(context.Context, *core.Fenced) error { return nil })
			}
			insert := func(ctx context.Context, f *core.Fenced) error {
				_, err := f.ExecContext(ctx, e.d.Rebind("INSERT INTO "+audit+" (id) VALUES (?)"), job.ID().String())
				return err
			}
			if job.Attempt() == 1 {
				// No wait for ctx: the database alone must refuse it.
				if err := e.awaitClockPast(job.ID(), itemTimeout); err != nil {
					return err
				}
				err := job.Fence(bg, insert)
				mu.Lock()
				lateErr = err
				mu.Unlock()
				close(refused)
				return nil
			}
			it, err := e.store.Get(bg, job.ID())
			if err != nil {
				return err
			}
			h, err := e.store.Attempts(bg, job.ID())
			if err != nil || len(h) != 1 {
				return errors.Join(err, errors.New("want one attempt in the history"))
			}
			mu.Lock()
			waited = it.AvailableAt.Sub(h[0].EndedAt)
			mu.Unlock()
			return job.Fence(bg, insert)
		}, worker.KindConfig{Timeout: kindTimeout, ForItem: func(it core.Item) worker.ItemConfig {
			if !strings.Contains(string(it.Payload), "short") {
				return worker.ItemConfig{}
			}
			return worker.ItemConfig{Timeout: itemTimeout, Backoff: func(int) time.Duration { return retry }}
		}})
	})
	stoptest.Await(t, refused, time.Minute, "the late fence of the short item")
	e.waitFor(time.Minute, "both completed", func(it core.Item) bool { return it.State == core.StateCompleted }, short, long)
	mu.Lock()
	defer mu.Unlock()
	if !errors.Is(lateErr, core.ErrPastDeadline) || !errors.Is(lateErr, worker.ErrDeadline) {
		t.Errorf("the fence past the item's Timeout = %v, want core.ErrPastDeadline and worker.ErrDeadline", lateErr)
	}
	if waited < retry-400*time.Millisecond || waited > retry+400*time.Millisecond {
		t.Errorf("the retry waited %v on the database clock, want the item's Backoff, %v (within 400 ms)", waited, retry)
	}
	if n := e.count(audit); n != 1 {
		t.Errorf("%d fenced effects, want 1 (the second attempt's)", n)
	}
	if it := e.get(long); it.Attempt != 1 {
		t.Errorf("the item with the kind's Timeout ran %d times, want once", it.Attempt)
	}
}
