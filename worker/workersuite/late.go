package workersuite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/stoptest"
	"github.com/plenumdb/plenum/worker"
)

// lateWritesRefused checks that a handler past its deadline writes
// nothing under its claim, whatever context it passes: a Job.Fence, a
// Job.Settle and a Store.Complete with Job.Claim, each made once the
// database clock has passed the kind's whole Timeout since the claim,
// with a context that never ends, are refused with the deadline's error
// and commit nothing; the attempt counts as a timeout (a history row) and
// the next attempt runs and completes.
func lateWritesRefused(e *env) {
	t := e.t
	const q = "late"
	kinds := []string{"fence", "settle", "complete"}
	audit := e.auditTable()
	specs := make([]core.ItemSpec, len(kinds))
	for i, k := range kinds {
		specs[i] = core.ItemSpec{Queue: q, Kind: k, MaxAttempts: 2}
	}
	ids := e.enqueue(specs...)
	cfg, timeout := e.deadlineConfig(q)
	cfg.Queues[q] = worker.QueueConfig{MaxWorkers: len(kinds)}
	var mu sync.Mutex
	refused := map[string]error{}
	done := make(chan struct{})
	late := func(kind string, err error) {
		mu.Lock()
		defer mu.Unlock()
		refused[kind] = err
		if len(refused) == len(kinds) {
			close(done)
		}
	}
	e.start(cfg, func(w *worker.Worker) {
		for _, kind := range kinds {
			w.HandleFunc(kind, func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
				bg := context.Background()
				result := "on time"
				if job.Attempt() == 1 {
					<-ctx.Done()
					if err := e.awaitClockPast(job.ID(), timeout); err != nil {
						late(kind, err)
						return err
					}
					result = "late"
				}
				if err := job.SetResult(result); err != nil {
					return err
				}
				raw := json.RawMessage(`"` + result + `"`)
				key := fmt.Sprintf("%s/%d", job.ID(), job.Attempt())
				insert := func(ctx context.Context, f *core.Fenced) error {
					_, err := f.ExecContext(ctx, e.d.Rebind("INSERT INTO "+audit+" (id) VALUES (?)"), key)
					return err
				}
				var err error
				switch kind {
				case "fence":
					err = job.Fence(bg, insert)
				case "settle":
					err = job.Settle(bg, func(ctx context.Context, f *core.Fenced) error {
						if err := insert(ctx, f); err != nil {
							return err
						}
						return f.Complete(ctx, raw)
					})
				case "complete":
					err = e.store.Complete(bg, job.Claim(), raw)
				}
				if job.Attempt() == 1 {
					late(kind, err)
				}
				// Returns nil whatever the write did: the refusal alone
				// must make the attempt a timeout.
				return nil
			}, worker.KindConfig{Timeout: timeout})
		}
	})
	stoptest.Await(t, done, time.Minute, "late write of every kind")
	mu.Lock()
	for _, kind := range kinds {
		err := refused[kind]
		if !errors.Is(err, core.ErrPastDeadline) {
			t.Errorf("%s after the deadline = %v, want core.ErrPastDeadline", kind, err)
		}
		if kind != "complete" && !errors.Is(err, worker.ErrDeadline) {
			t.Errorf("%s after the deadline = %v, want worker.ErrDeadline", kind, err)
		}
	}
	mu.Unlock()
	e.waitFor(time.Minute, "completed on attempt 2", func(it core.Item) bool { return it.State == core.StateCompleted }, ids...)
	for i, id := range ids {
		it := e.get(id)
		if it.Attempt != 2 || !sameJSON(it.Result, `"on time"`) {
			t.Errorf("%s: attempt %d, result %s; want completed on attempt 2 with its on-time result", kinds[i], it.Attempt, it.Result)
		}
		h, err := e.store.Attempts(e.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(h) != 1 || !strings.Contains(h[0].Error, "deadline") {
			t.Errorf("%s: history %+v, want one attempt that timed out", kinds[i], h)
		}
	}
	// Only the second attempts' fenced writes committed.
	if n := e.count(audit); n != 2 {
		t.Errorf("%d fenced effects, want 2 (the fence's and the settle's second attempts)", n)
	}
}

// awaitClockPast waits until the database clock has passed the claim of
// item id by d, polling, for a minute at most.
func (e *env) awaitClockPast(id uuid.UUID, d time.Duration) error {
	it, err := e.store.Get(context.Background(), id)
	if err != nil {
		return err
	}
	end := time.Now().Add(time.Minute)
	for {
		now, err := e.store.Now(context.Background())
		if err != nil {
			return err
		}
		if now.After(it.ClaimedAt.Add(d)) {
			return nil
		}
		if time.Now().After(end) {
			return fmt.Errorf("the database clock reads %v, not past %v after the claim at %v within a minute", now, d, it.ClaimedAt)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
