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

// periodicTicksRunOnce: two workers, each on a store of its own, run the
// same schedules and the queue their ticks go to, with retention deleting
// the finished ticks meanwhile: every tick's handler runs once, and none is
// skipped.
func periodicTicksRunOnce(e *env) {
	t := e.t
	var (
		mu    sync.Mutex
		runs  = map[string]int{}
		ticks = map[string][]time.Time{}
		hooks sync.Map // tick key -> enqueued by a hook event
	)
	jobs := []worker.PeriodicJob{
		{Name: "every-second", Every: time.Second, MaxCatchUp: 10, Item: core.ItemSpec{Queue: "cron", Kind: "tick", Payload: json.RawMessage(`{"n":1}`)}},
		{Name: "every-two", Every: 2 * time.Second, MaxCatchUp: 10, Item: core.ItemSpec{Queue: "cron", Kind: "tick"}},
	}
	var workers []*worker.Worker
	for range 2 {
		cfg := e.fast(map[string]int{"cron": 2})
		cfg.Periodic = jobs
		cfg.PeriodicInterval = 100 * time.Millisecond
		cfg.ReapInterval = 200 * time.Millisecond
		cfg.RetainFor = max(time.Second, e.store.MinLease())
		cfg.Hooks = worker.HookFunc(func(_ context.Context, ev worker.Event) {
			if ev.Kind == worker.EventTicked {
				if ev.Queue != "cron" {
					t.Errorf("ticked event on queue %q", ev.Queue)
				}
				if _, dup := hooks.LoadOrStore(core.TickKey(ev.Tick.Schedule, ev.Tick.At), true); dup {
					t.Errorf("tick %s of %s enqueued by two workers", ev.Tick.At, ev.Tick.Schedule)
				}
			}
		})
		s := e.open(0)
		w, err := worker.New(s, cfg)
		if err != nil {
			t.Fatal(err)
		}
		w.HandleFunc("tick", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
			name, at, ok := core.ParseTickKey(job.Item().Key)
			if !ok {
				t.Errorf("tick item with key %q", job.Item().Key)
			}
			mu.Lock()
			defer mu.Unlock()
			runs[job.Item().Key]++
			ticks[name] = append(ticks[name], at)
			return nil
		})
		if err := w.Start(e.ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = stoptest.Stop(t, w.Stop, 10*time.Second) })
		workers = append(workers, w)
	}
	// The schedules tick for 4.5 s at least, long enough for retention to
	// delete finished ticks while later ones are due, and until each has
	// run two ticks: on a loaded machine the first ones come late.
	enough := func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, j := range jobs {
			if len(ticks[j.Name]) < 2 {
				return false
			}
		}
		return true
	}
	from := time.Now()
	for time.Since(from) < 4500*time.Millisecond || !enough() {
		if time.Since(from) > time.Minute {
			break // and the checks below say which schedule fell short
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Stopped, the workers run no handler that could add a tick between
	// the first and the last seen below after they were read.
	for _, w := range workers {
		if err := stoptest.Stop(t, w.Stop, 10*time.Second); err != nil {
			t.Errorf("Stop: %v", err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for key, n := range runs {
		if n != 1 {
			t.Errorf("tick %s ran %d times", key, n)
		}
	}
	for _, j := range jobs {
		at := ticks[j.Name]
		if len(at) < 2 {
			t.Errorf("%s: %d ticks ran in %v", j.Name, len(at), time.Since(from).Round(time.Millisecond))
			continue
		}
		first, last := at[0], at[0]
		for _, a := range at {
			if a.Before(first) {
				first = a
			}
			if a.After(last) {
				last = a
			}
		}
		if want := int(last.Sub(first)/j.Every) + 1; len(at) != want {
			t.Errorf("%s: %d ticks ran from %s to %s, want %d", j.Name, len(at), first, last, want)
		}
	}
}
