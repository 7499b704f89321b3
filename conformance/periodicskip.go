package conformance

import (
	"time"

	"github.com/plenumdb/plenum/core"
)

// Periodic work with SkipWhile: no tick is enqueued while the previous
// tick's item is live, the ticks before it finished are skipped for good,
// and the next one after is enqueued.
func testPeriodicSkipWhile(e *env) {
	const queue = "skip"
	spec := core.ScheduleSpec{Name: "s", Every: time.Minute, MaxCatchUp: 100, SkipWhile: live, Item: core.ItemSpec{Queue: queue}}
	due := func(s *core.Store) []core.Tick {
		e.t.Helper()
		ticks, err := s.EnqueueDue(e.ctx, spec)
		if err != nil {
			e.t.Fatalf("EnqueueDue: %v", err)
		}
		return ticks
	}
	if ticks := due(e.s); len(ticks) != 0 {
		e.t.Fatalf("first sight: %d ticks, want none", len(ticks))
	}
	ticks := due(e.at(time.Minute))
	if len(ticks) != 1 {
		e.t.Fatalf("a minute later: %d ticks, want 1", len(ticks))
	}
	first := ticks[0]
	if ticks := due(e.at(3 * time.Minute)); len(ticks) != 0 {
		e.t.Errorf("previous tick available: %v, want none", ticks)
	}
	o := e.owner(e.s)
	s4 := e.at(4 * time.Minute)
	c := e.claimOne(s4, o, queue)
	if ticks := due(e.at(5 * time.Minute)); len(ticks) != 0 {
		e.t.Errorf("previous tick claimed: %v, want none", ticks)
	}
	s6 := e.at(6*time.Minute + 30*time.Second)
	e.complete(s6, c, "")
	finished := e.get(first.ID).FinishedAt
	s9 := e.at(9 * time.Minute)
	floor := e.now(s9).Truncate(time.Minute)
	ticks = due(s9)
	if len(ticks) == 0 {
		e.t.Fatalf("after the previous tick finished: no ticks")
	}
	if want := finished.Truncate(time.Minute).Add(time.Minute); !ticks[0].At.Equal(want) {
		e.t.Errorf("first tick after the item finished at %s: %s, want %s (the ones before skipped)", finished, ticks[0].At, want)
	}
	for i, tk := range ticks {
		if i > 0 && !tk.At.Equal(ticks[i-1].At.Add(time.Minute)) {
			e.t.Errorf("ticks %v are not consecutive", ticks)
		}
		if tk.Existed {
			e.t.Errorf("tick %s existed", tk.At)
		}
	}
	if last := ticks[len(ticks)-1].At; last.Before(floor) {
		e.t.Errorf("last tick %s, want at least %s", last, floor)
	}
	if total := e.total(queue); total != int64(1+len(ticks)) {
		e.t.Errorf("%d items, want %d", total, 1+len(ticks))
	}
	// The newest tick's item is live again: held.
	if more := due(e.at(12 * time.Minute)); len(more) != 0 {
		e.t.Errorf("latest tick available again: %v, want none", more)
	}
}
