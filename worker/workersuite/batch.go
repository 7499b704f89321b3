package workersuite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
)

// batchHandlerEndToEnd enqueues more items of a batch kind than one batch
// holds: the handler gets them in calls of at most MaxBatch, more than
// one item per call, each item once; every item completes with the
// result its job set, and the hooks hear of each item's start and
// completion on its own.
func batchHandlerEndToEnd(e *env) {
	t := e.t
	const q, items, maxBatch = "batch", 40, 8
	type mail struct {
		To string `json:"to"`
	}
	kind := worker.NewKind[mail]("mail.batch")
	args := make([]mail, items)
	for i := range args {
		args[i] = mail{To: fmt.Sprintf("user%d@example.com", i)}
	}
	res, err := kind.EnqueueMany(e.ctx, e.store, args, worker.EnqueueParams{Queue: q})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]uuid.UUID, len(res))
	for i, r := range res {
		ids[i] = r.ID
	}
	var mu sync.Mutex
	var sizes []int
	handled := map[uuid.UUID]int{}
	events := map[worker.EventKind]map[uuid.UUID]int{}
	cfg := e.fast(map[string]int{q: 2 * maxBatch})
	cfg.Hooks = worker.HookFunc(func(_ context.Context, ev worker.Event) {
		if ev.Item.ID == uuid.Nil {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if events[ev.Kind] == nil {
			events[ev.Kind] = map[uuid.UUID]int{}
		}
		events[ev.Kind][ev.Item.ID]++
	})
	e.start(cfg, func(w *worker.Worker) {
		kind.HandleBatch(w, func(ctx context.Context, jobs []*worker.Job[mail]) error {
			mu.Lock()
			sizes = append(sizes, len(jobs))
			for _, job := range jobs {
				handled[job.ID()]++
			}
			mu.Unlock()
			for _, job := range jobs {
				if err := job.SetResult("sent to " + job.Args.To); err != nil {
					return err
				}
			}
			return nil
		}, worker.BatchConfig{MaxBatch: maxBatch, MaxWait: 200 * time.Millisecond})
	})
	e.waitFor(patience, "completed", func(it core.Item) bool { return it.State == core.StateCompleted }, ids...)
	for i, id := range ids {
		if it := e.get(id); !sameJSON(it.Result, fmt.Sprintf("%q", "sent to "+args[i].To)) || it.Attempt != 1 {
			t.Errorf("item %d: result %s at attempt %d, want its own result at attempt 1", i, it.Result, it.Attempt)
		}
	}
	wantEvents := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(events[worker.EventCompleted]) == items
	}
	for end := time.Now().Add(10 * time.Second); !wantEvents() && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for _, n := range sizes {
		total += n
		if n > maxBatch {
			t.Errorf("a batch of %d, want at most MaxBatch %d", n, maxBatch)
		}
	}
	if total != items || len(handled) != items {
		t.Errorf("batches of %v handled %d items (%d distinct), want each of %d once", sizes, total, len(handled), items)
	}
	if len(sizes) >= items {
		t.Errorf("batches of %v: one call per item, want items gathered", sizes)
	}
	for _, k := range []worker.EventKind{worker.EventClaimed, worker.EventStarted, worker.EventCompleted} {
		if len(events[k]) != items {
			t.Errorf("%s events for %d items, want each of %d", k, len(events[k]), items)
		}
		for id, n := range events[k] {
			if n != 1 {
				t.Errorf("%d %s events for %s, want 1", n, k, id)
			}
		}
	}
}

// batchItemsEndDifferently runs one batch whose items end each their own
// way: one succeeds with its result, one is retried, one is dead, one is
// snoozed, and one takes the handler's returned error. All are written in
// the batch's one transaction: the history has a row for each failed
// attempt and none for the others, the hooks hear each item's outcome,
// and the retried and snoozed items run again and complete.
func batchItemsEndDifferently(e *env) {
	t := e.t
	const q = "batch-mixed"
	names := []string{"ok", "retry", "dead", "snooze", "returned"}
	specs := make([]core.ItemSpec, len(names))
	for i, n := range names {
		specs[i] = core.ItemSpec{Queue: q, Kind: "mixed", Payload: []byte(fmt.Sprintf("%q", n)), Priority: i}
	}
	ids := e.enqueue(specs...)
	byName := map[string]uuid.UUID{}
	for i, n := range names {
		byName[n] = ids[i]
	}
	var mu sync.Mutex
	var first []string // the first batch's items, by name
	runs := map[string]int{}
	events := map[uuid.UUID][]worker.EventKind{}
	cfg := e.fast(map[string]int{q: len(names)})
	cfg.Hooks = worker.HookFunc(func(_ context.Context, ev worker.Event) {
		switch ev.Kind {
		case worker.EventCompleted, worker.EventFailed, worker.EventDead, worker.EventSnoozed:
			mu.Lock()
			events[ev.Item.ID] = append(events[ev.Item.ID], ev.Kind)
			mu.Unlock()
		}
	})
	e.start(cfg, func(w *worker.Worker) {
		worker.HandleBatch(w, "mixed", func(ctx context.Context, jobs []*worker.Job[string]) error {
			mu.Lock()
			defer mu.Unlock()
			firstBatch := first == nil
			for _, job := range jobs {
				runs[job.Args]++
				if firstBatch {
					first = append(first, job.Args)
				}
				if runs[job.Args] > 1 {
					continue // the second run succeeds
				}
				switch job.Args {
				case "ok":
					if err := job.SetResult("done"); err != nil {
						return err
					}
					job.Succeed()
				case "retry":
					job.Retry(errors.New("try again"))
				case "dead":
					job.Dead(errors.New("bounced"))
				case "snooze":
					job.Snooze(50 * time.Millisecond)
				}
			}
			if firstBatch {
				return errors.New("the batch failed")
			}
			return nil
		}, worker.BatchConfig{MaxBatch: 10, KindConfig: worker.KindConfig{Backoff: func(int) time.Duration { return 50 * time.Millisecond }}})
	})
	e.waitFor(patience, "finished", func(it core.Item) bool { return it.State.Terminal() }, ids...)
	mu.Lock()
	slices.Sort(first)
	if want := slices.Sorted(slices.Values(names)); !slices.Equal(first, want) {
		t.Fatalf("the first batch held %v, want all of %v (enqueued before the worker started)", first, want)
	}
	mu.Unlock()

	type want struct {
		state   core.State
		attempt int
		history []string
		events  []worker.EventKind
	}
	wants := map[string]want{
		"ok":       {core.StateCompleted, 1, nil, []worker.EventKind{worker.EventCompleted}},
		"retry":    {core.StateCompleted, 2, []string{"failed try again"}, []worker.EventKind{worker.EventFailed, worker.EventCompleted}},
		"dead":     {core.StateDead, 1, []string{"failed discarded: bounced"}, []worker.EventKind{worker.EventDead}},
		"snooze":   {core.StateCompleted, 1, nil, []worker.EventKind{worker.EventSnoozed, worker.EventCompleted}},
		"returned": {core.StateCompleted, 2, []string{"failed the batch failed"}, []worker.EventKind{worker.EventFailed, worker.EventCompleted}},
	}
	heard := func() bool {
		mu.Lock()
		defer mu.Unlock()
		for n, w := range wants {
			if len(events[byName[n]]) < len(w.events) {
				return false
			}
		}
		return true
	}
	for end := time.Now().Add(10 * time.Second); !heard() && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	for _, n := range names {
		w, id := wants[n], byName[n]
		it := e.get(id)
		if it.State != w.state || it.Attempt != w.attempt {
			t.Errorf("%s: %s at attempt %d, want %s at attempt %d", n, it.State, it.Attempt, w.state, w.attempt)
		}
		if n == "ok" && !sameJSON(it.Result, `"done"`) {
			t.Errorf("ok: result %s, want \"done\"", it.Result)
		}
		h, err := e.store.Attempts(e.ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, a := range h {
			got = append(got, strings.TrimSpace(fmt.Sprintf("%s %s", a.Outcome, a.Error)))
		}
		if !slices.Equal(got, w.history) {
			t.Errorf("%s: history %q, want %q", n, got, w.history)
		}
		mu.Lock()
		if !slices.Equal(events[id], w.events) {
			t.Errorf("%s: events %v, want %v", n, events[id], w.events)
		}
		mu.Unlock()
	}
}

// batchCancelAndStop runs two batches. In the first, one item is
// cancelled while the handler runs: that item stays cancelled and is
// reported lost, the others complete. The second is running when the
// worker stops: its handler's context ends, and its items, whose
// outcome is then the handler's error, go back unused (released, at
// attempt 0 again, with no history).
func batchCancelAndStop(e *env) {
	t := e.t
	const q = "batch-cancel"
	ids := e.enqueue(
		core.ItemSpec{Queue: q, Kind: "first", Priority: 0},
		core.ItemSpec{Queue: q, Kind: "first", Priority: 1},
		core.ItemSpec{Queue: q, Kind: "first", Priority: 2},
	)
	victim := ids[1]
	var mu sync.Mutex
	events := map[uuid.UUID][]worker.EventKind{}
	cfg := e.fast(map[string]int{q: 4})
	cfg.Hooks = worker.HookFunc(func(_ context.Context, ev worker.Event) {
		switch ev.Kind {
		case worker.EventCompleted, worker.EventLost, worker.EventReleased, worker.EventFailed:
			mu.Lock()
			events[ev.Item.ID] = append(events[ev.Item.ID], ev.Kind)
			mu.Unlock()
		}
	})
	second := make(chan struct{})
	var entered atomic.Int32
	w := e.start(cfg, func(w *worker.Worker) {
		worker.HandleBatch(w, "first", func(ctx context.Context, jobs []*worker.Job[int]) error {
			if err := e.store.Cancel(ctx, victim); err != nil {
				return err
			}
			return nil
		}, worker.BatchConfig{MaxBatch: 10, MaxWait: time.Second})
		worker.HandleBatch(w, "second", func(ctx context.Context, jobs []*worker.Job[int]) error {
			// The two items may come in one batch or in two.
			if entered.Add(int32(len(jobs))) == 2 {
				close(second)
			}
			<-ctx.Done()
			return context.Cause(ctx)
		}, worker.BatchConfig{})
	})
	e.waitFor(patience, "finished", func(it core.Item) bool { return it.State.Terminal() }, ids...)
	for _, id := range ids {
		it := e.get(id)
		want := core.StateCompleted
		if id == victim {
			want = core.StateCancelled
		}
		if it.State != want {
			t.Errorf("item %s: %s, want %s", id, it.State, want)
		}
	}
	late := e.enqueue(core.ItemSpec{Queue: q, Kind: "second"}, core.ItemSpec{Queue: q, Kind: "second"})
	select {
	case <-second:
	case <-time.After(patience):
		t.Fatal("the second kind's items did not both reach their handler")
	}
	stopCtx, cancel := context.WithTimeout(e.ctx, 200*time.Millisecond)
	defer cancel()
	if err := w.Stop(stopCtx); err != nil {
		t.Fatal(err)
	}
	for _, id := range late {
		it := e.get(id)
		if it.State != core.StateAvailable || it.Attempt != 0 {
			t.Errorf("item of the stopped batch: %s at attempt %d, want available at attempt 0 (given back unused)", it.State, it.Attempt)
		}
		if h, err := e.store.Attempts(e.ctx, id); err != nil || len(h) != 0 {
			t.Errorf("item of the stopped batch: history %+v, %v; want none", h, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, id := range ids {
		want := []worker.EventKind{worker.EventCompleted}
		if id == victim {
			want = []worker.EventKind{worker.EventLost}
		}
		if !slices.Equal(events[id], want) {
			t.Errorf("item %s: events %v, want %v", id, events[id], want)
		}
	}
	for _, id := range late {
		if !slices.Equal(events[id], []worker.EventKind{worker.EventReleased}) {
			t.Errorf("item %s of the stopped batch: events %v, want [released]", id, events[id])
		}
	}
}
