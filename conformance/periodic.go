package conformance

import (
	"encoding/json"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/plenumdb/plenum/core"
)

// Periodic work: any number of processes calling EnqueueDue at once
// enqueue each tick once (the compare-and-set on the watermark commits
// with the tick's items), while retention deletes the finished ticks
// meanwhile without making any of them due again. Where write
// transactions run one at a time (SQLite) the race is only one of order;
// on the servers the calls overlap, and a compare-and-set that let a
// second transaction through shows here as a tick whose item existed.
func testPeriodicOnce(e *env) {
	// Stores sharing nothing but the tables, as processes do (Config.Open
	// may give a new database per call, so they share the handle), at
	// several clock offsets, so that calls race across minute boundaries.
	b := e.open(core.Options{})
	var stores []*core.Store
	for k := range 8 {
		stores = append(stores, e.at(time.Duration(k/2)*time.Minute))
	}
	interval := []core.ScheduleSpec{
		{Name: "every-1s-a", Every: time.Second, MaxCatchUp: 100, Item: core.ItemSpec{Queue: "tick", Kind: "a"}},
		{Name: "every-1s-b", Every: time.Second, MaxCatchUp: 100, Item: core.ItemSpec{Queue: "tick", Kind: "b"}},
		{Name: "every-2s", Every: 2 * time.Second, MaxCatchUp: 100, Item: core.ItemSpec{Queue: "tick", Kind: "c"}},
	}
	cron := []core.ScheduleSpec{
		{Name: "cron-1m", Cron: "* * * * *", MaxCatchUp: 2, Item: core.ItemSpec{Queue: "tick", Kind: "m"}},
		{Name: "cron-2m", Cron: "*/2 * * * *", MaxCatchUp: 1, Item: core.ItemSpec{Queue: "tick", Kind: "n"}},
	}

	var (
		mu     sync.Mutex
		seen   = map[string]int{} // tick key -> times enqueued
		byName = map[string][]time.Time{}
		purged int
	)
	record := func(ticks []core.Tick) {
		mu.Lock()
		defer mu.Unlock()
		for _, tk := range ticks {
			if tk.Existed {
				e.t.Errorf("tick %s of %s: its item already existed: enqueued twice", tk.At, tk.Schedule)
			}
			seen[core.TickKey(tk.Schedule, tk.At)]++
			byName[tk.Schedule] = append(byName[tk.Schedule], tk.At)
		}
	}
	// The cron schedules are first seen at the database's own clock, so
	// that the stores ahead of it find minutes due; the goroutines race
	// from the first sight of the interval schedules on (one insert of a
	// watermark row wins, the others are ignored).
	if _, err := e.s.EnqueueDue(e.ctx, cron...); err != nil {
		e.t.Fatalf("EnqueueDue: %v", err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := []*core.Store{e.s, b}[g%2]
			for {
				select {
				case <-stop:
					return
				default:
				}
				ticks, err := s.EnqueueDue(e.ctx, interval...)
				if err != nil {
					e.t.Errorf("EnqueueDue (interval): %v", err)
					return
				}
				record(ticks)
				ticks, err = stores[rand.IntN(len(stores))].EnqueueDue(e.ctx, cron...)
				if err != nil {
					e.t.Errorf("EnqueueDue (cron): %v", err)
					return
				}
				record(ticks)
			}
		}()
	}
	// A consumer finishing the ticks, and retention deleting them an hour
	// later, both running meanwhile.
	owner := e.owner(e.s)
	later := e.at(time.Hour)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			cs, err := e.s.Claim(e.ctx, core.ClaimParams{Queue: "tick", Owner: owner, Limit: 50, Lease: time.Minute})
			if err != nil {
				e.t.Errorf("Claim: %v", err)
				return
			}
			for _, c := range cs {
				if err := e.s.Complete(e.ctx, c, nil); err != nil {
					e.t.Errorf("Complete: %v", err)
					return
				}
			}
			r, err := later.Purge(e.ctx, core.PurgeParams{OlderThan: later.MinLease(), Limit: 50})
			if err != nil {
				e.t.Errorf("Purge: %v", err)
				return
			}
			mu.Lock()
			purged += r.Items
			mu.Unlock()
			time.Sleep(50 * time.Millisecond)
		}
	}()
	time.Sleep(time.Duration(e.scaled(3500, 2500)) * time.Millisecond)
	close(stop)
	wg.Wait()
	if e.t.Failed() {
		return
	}
	// Once the ticks are gone, calls from every store find none due that
	// was enqueued before.
	for _, s := range stores {
		ticks, err := s.EnqueueDue(e.ctx, append(interval, cron...)...)
		if err != nil {
			e.t.Fatal(err)
		}
		record(ticks)
	}
	for key, n := range seen {
		if n != 1 {
			e.t.Errorf("tick %s enqueued %d times", key, n)
		}
	}
	if purged == 0 {
		e.t.Errorf("retention deleted no tick while the schedules ran: the test proves nothing about it")
	}
	for _, sp := range interval {
		at := byName[sp.Name]
		if len(at) < 2 {
			e.t.Errorf("%s: %d ticks in %v, want at least 2", sp.Name, len(at), 2500*time.Millisecond)
			continue
		}
		// Every tick from the first to the last, none skipped.
		first, last := at[0], at[0]
		for _, t := range at {
			first, last = minTime(first, t), maxTime(last, t)
			if t.UnixMicro()%sp.Every.Microseconds() != 0 {
				e.t.Errorf("%s: tick %s is not on a multiple of %v", sp.Name, t, sp.Every)
			}
		}
		if want := int(last.Sub(first)/sp.Every) + 1; len(at) != want {
			e.t.Errorf("%s: %d ticks from %s to %s, want %d", sp.Name, len(at), first, last, want)
		}
	}
	if len(byName["cron-1m"]) == 0 {
		e.t.Errorf("cron-1m: no tick, though stores ran up to three minutes ahead")
	}
	// What is left in the queue plus what retention deleted is every
	// tick, once.
	if got := e.total("tick") + int64(purged); got != int64(len(seen)) {
		e.t.Errorf("%d items in the queue and %d deleted, for %d ticks", e.total("tick"), purged, len(seen))
	}
}

// After downtime (the clock moved ahead with ClockOffset), the missed
// ticks are caught up in closed form: the latest only, or the latest N;
// years of missed one-second ticks cost no more than one.
func testPeriodicCatchUp(e *env) {
	item := core.ItemSpec{Queue: "catch", Kind: "report", Payload: json.RawMessage(`{"r":1}`), Priority: 3, MaxAttempts: 2}
	specs := []core.ScheduleSpec{
		{Name: "hourly-latest", Every: time.Hour, Item: item},
		{Name: "hourly-3", Every: time.Hour, MaxCatchUp: 3, Item: item},
		{Name: "cron-latest", Cron: "0 */2 * * *", Item: item},
		{Name: "cron-4", Cron: "0 */2 * * *", MaxCatchUp: 4, Item: item},
		{Name: "second-latest", Every: time.Second, Item: item},
		{Name: "second-1000", Every: time.Second, MaxCatchUp: 1000, Item: item},
		{Name: "minute-1000", Cron: "* * * * *", MaxCatchUp: 1000, Item: item},
	}
	// First sight: nothing is due yet.
	if ticks, err := e.s.EnqueueDue(e.ctx, specs...); err != nil || len(ticks) != 0 {
		e.t.Fatalf("first EnqueueDue = %v, %v; want no tick", ticks, err)
	}
	const jump = 9 * 365 * 24 * time.Hour // about 2.8e8 missed seconds
	later := e.at(jump)
	before := e.now(later)
	start := time.Now()
	ticks, err := later.EnqueueDue(e.ctx, specs...)
	if err != nil {
		e.t.Fatalf("EnqueueDue after %v: %v", jump, err)
	}
	if took := time.Since(start); took > 2*time.Minute {
		e.t.Errorf("catching up took %v", took)
	}
	now := e.now(later)
	by := map[string][]time.Time{}
	for _, tk := range ticks {
		if tk.Existed {
			e.t.Errorf("%s: tick %s already existed", tk.Schedule, tk.At)
		}
		by[tk.Schedule] = append(by[tk.Schedule], tk.At)
		it := e.get(tk.ID)
		if it.Queue != item.Queue || it.Kind != item.Kind || it.Priority != item.Priority || it.MaxAttempts != item.MaxAttempts ||
			it.Key != core.TickKey(tk.Schedule, tk.At) || !jsonEqual(it.Payload, item.Payload) {
			e.t.Errorf("%s: item %+v is not the schedule's item with the tick's key", tk.Schedule, it)
		}
	}
	check := func(name string, n int, step time.Duration, latest time.Time) {
		got := by[name]
		if len(got) != n {
			e.t.Errorf("%s: %d ticks caught up, want %d: %v", name, len(got), n, got)
			return
		}
		for i, t := range got {
			if want := latest.Add(-time.Duration(n-1-i) * step); !t.Equal(want) {
				e.t.Errorf("%s: tick %d at %s, want %s (the latest %d, oldest first)", name, i, t, want, n)
			}
		}
	}
	// The latest tick of each is the last at or before the clock of its
	// transaction, which lies between before and now.
	slack := e.clockSlack()
	if at := by["second-latest"]; len(at) != 1 || at[0].Before(before.Add(-time.Second-slack)) || at[0].After(now.Add(slack)) {
		e.t.Errorf("second-latest: ticks %v, want one between %s and %s", at, before.Add(-time.Second), now)
	}
	hour := now.Truncate(time.Hour)
	twoHours := now.Truncate(2 * time.Hour)
	minute := now.Truncate(time.Minute)
	if !before.Add(-slack).Truncate(time.Minute).Equal(minute) || !now.Add(slack).Truncate(time.Minute).Equal(minute) {
		e.t.Skipf("the clock crossed a minute (%s to %s): no exact check", before, now)
	}
	check("hourly-latest", 1, time.Hour, hour)
	check("hourly-3", 3, time.Hour, hour)
	check("cron-latest", 1, 2*time.Hour, twoHours)
	check("cron-4", 4, 2*time.Hour, twoHours)
	if at := by["second-1000"]; len(at) > 0 {
		check("second-1000", 1000, time.Second, at[len(at)-1])
	} else {
		e.t.Errorf("second-1000: no tick caught up")
	}
	check("minute-1000", 1000, time.Minute, minute)
	check("second-latest", 1, time.Second, by["second-latest"][0])

	// Again at the same time: nothing more is due.
	if again, err := later.EnqueueDue(e.ctx, specs[:4]...); err != nil || len(again) != 0 {
		e.t.Errorf("EnqueueDue again = %v, %v; want no tick", again, err)
	}
	// Three hours on: only the new ticks.
	more, err := e.at(jump+3*time.Hour).EnqueueDue(e.ctx, specs[1])
	if err != nil {
		e.t.Fatal(err)
	}
	if len(more) != 3 || !more[0].At.Equal(hour.Add(time.Hour)) {
		e.t.Errorf("three hours on, hourly-3 enqueued %v; want the 3 hours after %s", more, hour)
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
