package workersuite

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
)

// enqueueWakesIdleWorker checks that an idle worker whose poll
// interval is an hour runs an item enqueued through its store at once:
// only the wake-up can have started it. A worker with PollOnly, idle in
// the same way, leaves its item alone, which shows that nothing else (a
// freed slot, a stray poll) would have.
func enqueueWakesIdleWorker(e *env) {
	t := e.t
	const woke, polls = "wake", "wake.poll"
	started := make(chan uuid.UUID, 16)
	handler := func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		started <- job.ID()
		return nil
	}
	idle := func(queue string, pollOnly bool) {
		cfg := e.fast(map[string]int{queue: 2})
		cfg.PollInterval = time.Hour
		cfg.PollOnly = pollOnly
		// The first item is there for the worker's first claim; once
		// it completed, the worker is idle, waiting on its hour-long
		// poll.
		first := e.enqueue(core.ItemSpec{Queue: queue, Kind: "k"})[0]
		e.start(cfg, func(w *worker.Worker) { w.HandleFunc("k", handler) })
		waitStarted(t, started, first)
		e.waitFor(10*time.Second, "completed", func(it core.Item) bool { return it.State == core.StateCompleted }, first)
		time.Sleep(100 * time.Millisecond) // let the claim loop go back to waiting
	}
	idle(woke, false)
	next := e.enqueue(core.ItemSpec{Queue: woke, Kind: "k"})[0]
	waitStarted(t, started, next)
	e.waitFor(10*time.Second, "completed", func(it core.Item) bool { return it.State == core.StateCompleted }, next)

	idle(polls, true)
	left := e.enqueue(core.ItemSpec{Queue: polls, Kind: "k"})[0]
	select {
	case id := <-started:
		t.Fatalf("item %s started on a worker polling hourly: something other than a wake-up claims", id)
	case <-time.After(500 * time.Millisecond):
	}
	if it := e.get(left); it.State != core.StateAvailable {
		t.Fatalf("the poll-only worker's item is %s, want available", it.State)
	}
}

// waitStarted waits for the handler to start on id.
func waitStarted(t *testing.T, started <-chan uuid.UUID, id uuid.UUID) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case got := <-started:
			if got == id {
				return
			}
		case <-timeout:
			t.Fatalf("the handler did not start on %s within 20 s, with a poll interval of an hour", id)
		}
	}
}
