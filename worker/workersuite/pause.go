package workersuite

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
)

// pausedQueue: a queue paused through one worker runs nothing
// in another worker's process while the other queue keeps running, and
// runs its items once resumed.
func pausedQueue(e *env) {
	t := e.t
	const paused, other = "pause-me", "keep-going"
	var ran atomic.Int32
	setup := func(w *worker.Worker) {
		w.HandleFunc("k", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
			ran.Add(1)
			return nil
		})
	}
	a := e.start(e.fast(map[string]int{paused: 2}), setup)
	if err := a.PauseQueue(e.ctx, paused); err != nil {
		t.Fatal(err)
	}
	b := e.start(e.fast(map[string]int{paused: 2, other: 2}), setup)
	ids := e.enqueue(core.ItemSpec{Queue: paused, Kind: "k"}, core.ItemSpec{Queue: paused, Kind: "k"})
	done := e.enqueue(core.ItemSpec{Queue: other, Kind: "k"})
	completed := func(it core.Item) bool { return it.State == core.StateCompleted }
	e.waitFor(10*time.Second, "completed", completed, done...)
	time.Sleep(300 * time.Millisecond) // six poll intervals
	if n := ran.Load(); n != 1 {
		t.Fatalf("%d handlers ran, want only the unpaused queue's one", n)
	}
	for _, id := range ids {
		if it := e.get(id); it.State != core.StateAvailable || it.Attempt != 0 {
			t.Fatalf("item of the paused queue: %s, attempt %d; want untouched", it.State, it.Attempt)
		}
	}
	if err := b.ResumeQueue(e.ctx, paused); err != nil {
		t.Fatal(err)
	}
	e.waitFor(10*time.Second, "completed", completed, ids...)
	if err := a.PauseQueue(e.ctx, strings.Repeat("x", 1000)); err == nil {
		t.Error("PauseQueue of a name too long for the queues table succeeded")
	}
}

var errBoom = errors.New("boom")

// panicStackInHistory: a handler's panic is one failed attempt
// of the item's history, with the panic's value and stack, next to the
// plain failure before it.
func panicStackInHistory(e *env) {
	t := e.t
	const q = "history"
	id := e.enqueue(core.ItemSpec{Queue: q, Kind: "flaky", MaxAttempts: 2})[0]
	var runs atomic.Int32
	e.start(e.fast(map[string]int{q: 1}), func(w *worker.Worker) {
		w.HandleFunc("flaky", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
			if runs.Add(1) == 1 {
				return errBoom
			}
			panic("handler blew up")
		}, worker.KindConfig{Backoff: func(int) time.Duration { return 10 * time.Millisecond }})
	})
	e.waitFor(10*time.Second, "dead", func(it core.Item) bool { return it.State == core.StateDead }, id)
	h, err := e.store.Attempts(e.ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || h[0].N != 1 || h[0].Outcome != core.OutcomeFailed || h[0].Error != errBoom.Error() {
		t.Fatalf("history = %+v; want the failure, then the panic", h)
	}
	if p := h[1]; p.N != 2 || p.Outcome != core.OutcomeFailed || !strings.Contains(p.Error, "panic: handler blew up") ||
		!strings.Contains(p.Error, "goroutine") || !strings.Contains(p.Error, "pause.go") {
		t.Errorf("the panic's attempt = %+v; want its value and a stack through the handler", p)
	}
}
