package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plenumdb/plenum/core"
)

// Schedules kept in the database, run by EnqueueStoredDue in several
// processes while two others change them: their payloads, their timing
// (every second, every two), pauses and resumes; a code-declared schedule
// runs beside them. Each tick is enqueued once, with the item of the
// revision whose timing found it (a tick of the two-second timing always
// falls on an even second), and once PauseSchedule has returned, no call
// in any process enqueues another tick of the paused schedule.
func testStoredSchedulesOnce(e *env) {
	b := e.open(core.Options{})
	var runners []*core.Store
	for k := range 6 {
		runners = append(runners, e.at(time.Duration(k/2)*time.Minute))
	}
	code := []core.ScheduleSpec{{Name: "code", Every: time.Second, MaxCatchUp: 100, Item: core.ItemSpec{Queue: "code"}}}
	timing := func(name string, two bool) core.ScheduleSpec {
		sp := core.ScheduleSpec{Name: name, Every: time.Second, MaxCatchUp: 100, Item: core.ItemSpec{Queue: name, Kind: "1s"}}
		if two {
			sp.Every, sp.Item.Kind = 2*time.Second, "2s"
		}
		return sp
	}
	for _, name := range []string{"edited", "paused"} {
		if _, err := e.s.SetSchedule(e.ctx, timing(name, false)); err != nil {
			e.t.Fatalf("SetSchedule(%s): %v", name, err)
		}
	}

	var (
		mu    sync.Mutex
		seen  = map[string]int{}
		calls atomic.Int64
	)
	record := func(ticks []core.Tick) {
		mu.Lock()
		defer mu.Unlock()
		for _, tk := range ticks {
			if tk.Existed {
				e.t.Errorf("tick %s of %s: its item already existed: enqueued twice", tk.At, tk.Schedule)
			}
			key := core.TickKey(tk.Schedule, tk.At)
			seen[key]++
		}
	}
	// The code schedule opens on the base clock, as the stored ones did
	// in SetSchedule: the runners a minute or two ahead then have ticks
	// to enqueue at once, however short the run. Opened by one of them
	// first, its watermark stood two minutes ahead, and a run shorter
	// than a second enqueued none of its ticks.
	opened, err := e.s.EnqueueDue(e.ctx, code...)
	if err != nil {
		e.t.Fatalf("EnqueueDue: %v", err)
	}
	record(opened)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				s := runners[(g+rand.IntN(2))%len(runners)]
				ticks, err := s.EnqueueStoredDue(e.ctx)
				if err != nil {
					e.t.Errorf("EnqueueStoredDue: %v", err)
					return
				}
				record(ticks)
				ticks, err = s.EnqueueDue(e.ctx, code...)
				if err != nil {
					e.t.Errorf("EnqueueDue: %v", err)
					return
				}
				record(ticks)
				calls.Add(1)
			}
		})
	}
	// One process changes "edited" over and over: its payload, then its
	// timing.
	wg.Go(func() {
		for n := 0; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			sp := timing("edited", n%4 >= 2)
			sp.Item.Payload = json.RawMessage(fmt.Sprintf(`{"n":%d}`, n))
			if _, err := b.SetSchedule(e.ctx, sp); err != nil {
				e.t.Errorf("SetSchedule: %v", err)
				return
			}
		}
	})
	// Another pauses "paused", waits for every runner to have called
	// twice more, checks that its queue did not grow, and resumes it.
	rounds := e.scaled(8, 3)
	for range rounds {
		if err := e.s.PauseSchedule(e.ctx, "paused"); err != nil {
			e.t.Fatalf("PauseSchedule: %v", err)
		}
		before := e.total("paused")
		for want := calls.Load() + 2*int64(len(runners)); calls.Load() < want && !e.t.Failed(); {
			time.Sleep(5 * time.Millisecond)
		}
		if after := e.total("paused"); after != before {
			e.t.Errorf("paused schedule's queue grew from %d to %d items after PauseSchedule returned", before, after)
		}
		if err := e.s.ResumeSchedule(e.ctx, "paused"); err != nil {
			e.t.Fatalf("ResumeSchedule: %v", err)
		}
		for want := calls.Load() + int64(len(runners)); calls.Load() < want && !e.t.Failed(); {
			time.Sleep(5 * time.Millisecond)
		}
	}
	close(stop)
	wg.Wait()
	if e.t.Failed() {
		return
	}
	for key, n := range seen {
		if n != 1 {
			e.t.Errorf("tick %s enqueued %d times", key, n)
		}
	}
	ticked := map[string]int{}
	for key := range seen {
		name, at, ok := core.ParseTickKey(key)
		if !ok {
			e.t.Fatalf("tick key %q does not parse", key)
		}
		ticked[name]++
		if name != "edited" {
			continue
		}
		var kind string
		if err := e.db.QueryRowContext(e.ctx, e.d.Rebind("SELECT kind FROM "+e.names.Items+" WHERE queue = ? AND unique_key = ?"), "edited", key).Scan(&kind); err != nil {
			e.t.Fatalf("item of tick %s: %v", key, err)
		}
		if kind == "2s" && at.Unix()%2 != 0 {
			e.t.Errorf("tick %s of the two-second timing is on an odd second: an item of one revision at a tick of another", key)
		}
	}
	for _, name := range []string{"code", "edited", "paused"} {
		if ticked[name] == 0 {
			e.t.Errorf("no tick of %s enqueued", name)
		}
	}
	// Each schedule's items are its ticks, no more.
	for _, name := range []string{"code", "edited", "paused"} {
		if got := e.total(name); got != int64(ticked[name]) {
			e.t.Errorf("queue %s holds %d items, %d ticks recorded", name, got, ticked[name])
		}
	}
}

// dstCase is a schedule set at one time and run at a later one, both
// moved by the store's clock offset, and the ticks it must enqueue.
type dstCase struct {
	name, cron string
	set, run   time.Time
	want       []time.Time
}

// Stored schedules across daylight-saving changes, on the database
// clock: in New York, 02:00 EST became 03:00 EDT on 8 March 2026 (07:00
// UTC), and 02:00 EDT became 01:00 EST on 1 November 2026 (06:00 UTC). A
// skipped wall time ticks at the end of the gap; a repeated one ticks
// once, at its first pass. Two processes run the catch-up at once.
func testStoredSchedulesDaylightSaving(e *env) {
	utc := func(m time.Month, d, h, min int) time.Time { return time.Date(2026, m, d, h, min, 0, 0, time.UTC) }
	cases := []dstCase{
		{"spring-daily", "30 2 * * *", utc(3, 7, 12, 0), utc(3, 9, 12, 0), []time.Time{utc(3, 8, 7, 0), utc(3, 9, 6, 30)}},
		{"spring-hourly", "30 * * * *", utc(3, 8, 5, 0), utc(3, 8, 9, 0), []time.Time{utc(3, 8, 5, 30), utc(3, 8, 6, 30), utc(3, 8, 7, 0), utc(3, 8, 7, 30), utc(3, 8, 8, 30)}},
		{"fall-daily", "30 1 * * *", utc(10, 31, 12, 0), utc(11, 2, 12, 0), []time.Time{utc(11, 1, 5, 30), utc(11, 2, 6, 30)}},
		{"fall-hourly", "30 * * * *", utc(11, 1, 3, 0), utc(11, 1, 8, 0), []time.Time{utc(11, 1, 3, 30), utc(11, 1, 4, 30), utc(11, 1, 5, 30), utc(11, 1, 7, 30)}},
	}
	for _, c := range cases {
		now := time.Now()
		setter := e.at(c.set.Sub(now))
		sp := core.ScheduleSpec{Name: c.name, Cron: c.cron, TimeZone: "America/New_York", MaxCatchUp: 100, Item: core.ItemSpec{Queue: c.name}}
		if _, err := setter.SetSchedule(e.ctx, sp); err != nil {
			e.t.Fatalf("%s: SetSchedule: %v", c.name, err)
		}
		runA, runB := e.at(c.run.Sub(now)), e.at(c.run.Sub(now))
		var got []time.Time
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, s := range []*core.Store{runA, runB} {
			wg.Go(func() {
				ticks, err := s.EnqueueStoredDue(e.ctx)
				if err != nil {
					e.t.Errorf("%s: EnqueueStoredDue: %v", c.name, err)
				}
				mu.Lock()
				defer mu.Unlock()
				for _, tk := range ticks {
					if tk.Schedule == c.name {
						got = append(got, tk.At)
					}
				}
			})
		}
		wg.Wait()
		if len(got) != len(c.want) {
			e.t.Fatalf("%s: ticks %v, want %v", c.name, got, c.want)
		}
		for _, at := range c.want {
			key := core.TickKey(c.name, at)
			if n := e.sqlCount("SELECT COUNT(*) FROM {items} WHERE queue = ? AND unique_key = ?", c.name, key); n != 1 {
				e.t.Errorf("%s: %d items of tick %s, want 1", c.name, n, key)
			}
		}
		if err := e.s.DeleteSchedule(e.ctx, c.name); err != nil {
			e.t.Fatal(err)
		}
	}
}

// Backfill, trigger and the API's refusals: a backfill enqueues the ticks
// the watermark passed over (here, while the schedule was paused) once,
// however many backfills of the range run at once, never a tick after the
// watermark; a tick whose item retention purged is enqueued again by a
// backfill that covers it. A trigger enqueues the item at once, off the
// timing. Names of code-declared schedules are refused; unknown names are
// ErrNotFound.
func testStoredSchedulesBackfill(e *env) {
	sp := core.ScheduleSpec{Name: "hourly", Every: time.Hour, Item: core.ItemSpec{Queue: "bf"}}
	if created, err := e.s.SetSchedule(e.ctx, sp); err != nil || !created {
		e.t.Fatalf("SetSchedule = %v, %v", created, err)
	}
	if created, err := e.s.SetSchedule(e.ctx, sp); err != nil || created {
		e.t.Fatalf("SetSchedule again = %v, %v; want a change", created, err)
	}
	set, err := e.s.GetSchedule(e.ctx, "hourly")
	if err != nil || set.Revision != 2 || set.Paused || !set.Next.Equal(set.Watermark.Add(time.Hour)) {
		e.t.Fatalf("GetSchedule = %+v, %v", set, err)
	}
	// Paused for ten hours: resuming passes over the ten ticks (eleven,
	// when an hour began since the schedule was set).
	if err := e.s.PauseSchedule(e.ctx, "hourly"); err != nil {
		e.t.Fatal(err)
	}
	later := e.at(10*time.Hour + time.Minute)
	if ticks, err := later.EnqueueStoredDue(e.ctx); err != nil || len(ticks) != 0 {
		e.t.Fatalf("EnqueueStoredDue of a paused schedule = %v, %v", ticks, err)
	}
	if err := later.ResumeSchedule(e.ctx, "hourly"); err != nil {
		e.t.Fatal(err)
	}
	if ticks, err := later.EnqueueStoredDue(e.ctx); err != nil || len(ticks) != 0 {
		e.t.Fatalf("EnqueueStoredDue after resuming = %v, %v; want the paused ticks passed over", ticks, err)
	}
	resumed, err := later.GetSchedule(e.ctx, "hourly")
	passed := int(resumed.Watermark.Sub(set.Watermark) / time.Hour)
	if err != nil || passed < 10 || passed > 11 || !resumed.Watermark.Equal(set.Watermark.Add(time.Duration(passed)*time.Hour)) {
		e.t.Fatalf("watermark after resuming = %v, %v; want the tick ten hours after %v", resumed.Watermark, err, set.Watermark)
	}
	// Three backfills of the whole range and past it at once: the ten
	// ticks once, none after the watermark.
	var wg sync.WaitGroup
	var mu sync.Mutex
	enqueued, existed := 0, 0
	for range 3 {
		wg.Go(func() {
			bf, err := e.s.BackfillSchedule(e.ctx, "hourly", set.Watermark, resumed.Watermark.Add(5*time.Hour))
			if err != nil {
				e.t.Errorf("BackfillSchedule: %v", err)
				return
			}
			if !bf.Through.Equal(resumed.Watermark) {
				e.t.Errorf("backfill through %v, want the watermark %v", bf.Through, resumed.Watermark)
			}
			mu.Lock()
			defer mu.Unlock()
			enqueued += len(bf.Enqueued)
			existed += bf.Existed
		})
	}
	wg.Wait()
	// The range holds the set watermark's tick too (never enqueued: the
	// schedule started after it) and the ones passed over.
	if want := passed + 1; enqueued != want || existed != 2*want || e.total("bf") != int64(want) {
		e.t.Fatalf("backfills enqueued %d, found %d existing, queue holds %d; want %d, %d, %d", enqueued, existed, e.total("bf"), want, 2*want, want)
	}
	// Retention purges the oldest tick's item: a backfill covering it
	// enqueues it again, the database having no record of it left.
	owner := e.owner(e.s)
	c := e.claimOne(e.s, owner, "bf")
	e.complete(e.s, c, "")
	if r, err := e.at(time.Hour*24).Purge(e.ctx, core.PurgeParams{OlderThan: time.Hour, Limit: 10}); err != nil || r.Items != 1 {
		e.t.Fatalf("Purge = %+v, %v", r, err)
	}
	bf, err := e.s.BackfillSchedule(e.ctx, "hourly", set.Watermark, resumed.Watermark)
	if err != nil || len(bf.Enqueued) != 1 || bf.Existed != passed {
		e.t.Fatalf("backfill after a purge = %d enqueued, %d existing, %v; want 1 and %d", len(bf.Enqueued), bf.Existed, err, passed)
	}

	// A trigger enqueues at once, paused or not, and moves nothing.
	tk, err := e.s.TriggerSchedule(e.ctx, "hourly")
	if err != nil {
		e.t.Fatal(err)
	}
	if it := e.get(tk.ID); it.Key != core.TriggerKey("hourly", tk.At) || it.Queue != "bf" {
		e.t.Errorf("triggered item = key %q queue %q", it.Key, it.Queue)
	}
	if name, _, ok := core.ParseTickKey(core.TriggerKey("hourly", tk.At)); !ok || name != "hourly" {
		e.t.Errorf("ParseTickKey of a trigger's key = %q, %v", name, ok)
	}
	if after, err := later.GetSchedule(e.ctx, "hourly"); err != nil || !after.Watermark.Equal(resumed.Watermark) {
		e.t.Errorf("watermark after a trigger = %v, %v", after.Watermark, err)
	}

	// A code-declared schedule's name is not a stored one's, either way.
	if _, err := e.s.EnqueueDue(e.ctx, core.ScheduleSpec{Name: "code", Every: time.Hour, Item: core.ItemSpec{Queue: "bf"}}); err != nil {
		e.t.Fatal(err)
	}
	var ie *core.InputError
	if _, err := e.s.SetSchedule(e.ctx, core.ScheduleSpec{Name: "code", Every: time.Hour, Item: core.ItemSpec{Queue: "bf"}}); !errors.As(err, &ie) || ie.Field != "Name" {
		e.t.Errorf("SetSchedule of a code schedule's name = %v", err)
	}
	if _, err := e.s.EnqueueDue(e.ctx, core.ScheduleSpec{Name: "hourly", Every: time.Hour, Item: core.ItemSpec{Queue: "bf"}}); !errors.As(err, &ie) {
		e.t.Errorf("EnqueueDue of a stored schedule's name = %v", err)
	}
	if err := e.s.DeleteSchedule(e.ctx, "code"); err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.s.EnqueueDue(e.ctx, core.ScheduleSpec{Name: "code", Every: time.Hour, Item: core.ItemSpec{Queue: "bf"}}); err != nil {
		e.t.Errorf("the code schedule after DeleteSchedule of its name: %v", err)
	}
	for _, err := range []error{
		e.s.PauseSchedule(e.ctx, "missing"), e.s.ResumeSchedule(e.ctx, "missing"),
		func() error { _, err := e.s.TriggerSchedule(e.ctx, "missing"); return err }(),
		func() error { _, err := e.s.GetSchedule(e.ctx, "missing"); return err }(),
		func() error { _, err := e.s.BackfillSchedule(e.ctx, "missing", time.Now(), time.Now()); return err }(),
	} {
		if !errors.Is(err, core.ErrNotFound) {
			e.t.Errorf("an unknown schedule = %v, want ErrNotFound", err)
		}
	}
	if err := e.s.DeleteSchedule(e.ctx, "hourly"); err != nil {
		e.t.Fatal(err)
	}
	if all, err := e.s.Schedules(e.ctx); err != nil || len(all) != 0 {
		e.t.Errorf("Schedules after delete = %v, %v", all, err)
	}
}
