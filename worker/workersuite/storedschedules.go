package workersuite

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/stoptest"
	"github.com/plenumdb/plenum/worker"
)

// storedSchedulesWhileRunning: two workers, each on a store of its own,
// run the schedules kept in the database (Config.StoredSchedules) beside
// a code-declared one. A schedule set while they run ticks; a change of
// its payload reaches the next ticks; once paused it enqueues nothing
// while the code's schedule ticks on; resumed, it ticks again; deleted, it
// stops. Every tick's handler runs once.
func storedSchedulesWhileRunning(e *env) {
	t := e.t
	var (
		mu       sync.Mutex
		runs     = map[string]int{}
		payloads = map[int]int{} // schedule "stored": ticks run per payload's v
		beats    int
	)
	code := []worker.PeriodicJob{{Name: "beat", Every: time.Second, MaxCatchUp: 10, Item: core.ItemSpec{Queue: "sched", Kind: "tick"}}}
	for range 2 {
		cfg := e.fast(map[string]int{"sched": 2})
		cfg.Periodic = code
		cfg.StoredSchedules = true
		cfg.PeriodicInterval = 100 * time.Millisecond
		cfg.Hooks = worker.HookFunc(func(_ context.Context, ev worker.Event) {
			// Every tick, stored or declared in code, names its queue.
			if ev.Kind == worker.EventTicked && ev.Queue != "sched" {
				t.Errorf("tick of %s reported on queue %q, want sched", ev.Tick.Schedule, ev.Queue)
			}
		})
		w, err := worker.New(e.open(0), cfg)
		if err != nil {
			t.Fatal(err)
		}
		w.HandleFunc("tick", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
			name, _, ok := core.ParseTickKey(job.Item().Key)
			if !ok {
				t.Errorf("tick item with key %q", job.Item().Key)
			}
			mu.Lock()
			defer mu.Unlock()
			runs[job.Item().Key]++
			if name == "beat" {
				beats++
			} else {
				var p struct{ V int }
				if err := json.Unmarshal(job.Item().Payload, &p); err != nil {
					t.Errorf("payload %s: %v", job.Item().Payload, err)
				}
				payloads[p.V]++
			}
			return nil
		})
		if err := w.Start(e.ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = stoptest.Stop(t, w.Stop, 10*time.Second) })
	}
	await := func(what string, ok func() bool) {
		t.Helper()
		for from := time.Now(); ; time.Sleep(20 * time.Millisecond) {
			mu.Lock()
			done := ok()
			mu.Unlock()
			if done {
				return
			}
			if time.Since(from) > time.Minute {
				t.Fatalf("no %s within a minute", what)
			}
		}
	}
	set := func(payload string) {
		t.Helper()
		sp := core.ScheduleSpec{Name: "stored", Every: time.Second, MaxCatchUp: 10, Item: core.ItemSpec{Queue: "sched", Kind: "tick", Payload: json.RawMessage(payload)}}
		if _, err := e.store.SetSchedule(e.ctx, sp); err != nil {
			t.Fatal(err)
		}
	}
	set(`{"v":1}`)
	await("tick of the schedule set", func() bool { return payloads[1] >= 2 })
	set(`{"v":2}`)
	await("tick of the changed schedule", func() bool { return payloads[2] >= 2 })
	stored := func() int { return payloads[1] + payloads[2] }
	quiet := func(what string) {
		t.Helper()
		counts, err := e.store.Counts(e.ctx, "sched")
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		before, beat := stored(), beats
		mu.Unlock()
		// Three beats later, both workers have looked for due ticks
		// since; the queue emptied, no stored tick ran.
		await("beats", func() bool { return beats >= beat+3 })
		await("handlers to finish", func() bool {
			c, err := e.store.Counts(e.ctx, "sched")
			return err == nil && c[core.StateAvailable]+c[core.StateClaimed] == 0
		})
		mu.Lock()
		defer mu.Unlock()
		if after := stored(); after != before {
			t.Errorf("%s schedule: %d ticks ran after it was %s, before the queue held %v", what, after-before, what, counts)
		}
	}
	if err := e.store.PauseSchedule(e.ctx, "stored"); err != nil {
		t.Fatal(err)
	}
	// Ticks enqueued before the pause committed may still run: wait for
	// the queue to empty before counting.
	await("queue to empty", func() bool {
		c, err := e.store.Counts(e.ctx, "sched")
		return err == nil && c[core.StateAvailable]+c[core.StateClaimed] == 0
	})
	quiet("paused")
	if err := e.store.ResumeSchedule(e.ctx, "stored"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	resumedAt := stored()
	mu.Unlock()
	await("tick after resuming", func() bool { return stored() >= resumedAt+2 })
	if err := e.store.DeleteSchedule(e.ctx, "stored"); err != nil {
		t.Fatal(err)
	}
	await("queue to empty", func() bool {
		c, err := e.store.Counts(e.ctx, "sched")
		return err == nil && c[core.StateAvailable]+c[core.StateClaimed] == 0
	})
	quiet("deleted")
	mu.Lock()
	defer mu.Unlock()
	for key, n := range runs {
		if n != 1 {
			t.Errorf("tick %s ran %d times", key, n)
		}
	}
}
