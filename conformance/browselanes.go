package conformance

import (
	"errors"
	"slices"
	"time"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
)

// A queue's lanes as the dashboard reads them: in key order, a keyset page
// at a time with no key repeated or skipped, each with the limit that
// applies to it and where it comes from, its claimed and available items
// (as the items themselves say, each count capped), and its next turn (none
// for a lane without work, later than now for one whose rate is spent or
// whose item is not due yet).
func testBrowseLanes(e *env) {
	const q = "l-q"
	a := e.owner(e.s)
	if err := e.s.SetLimit(e.ctx, core.Limit{Queue: q, Concurrency: 2}); err != nil {
		e.t.Fatalf("SetLimit default: %v", err)
	}
	if err := e.s.SetLimit(e.ctx, core.Limit{Queue: q, Key: "k4", Concurrency: 1, Rate: 1, Per: time.Hour}); err != nil {
		e.t.Fatalf("SetLimit k4: %v", err)
	}
	spec := func(key string, delay time.Duration) core.ItemSpec {
		return core.ItemSpec{Queue: q, FlowKey: key, Delay: delay}
	}
	e.enqueue(e.s, spec("k1", 0), spec("k1", 0), spec("k1", 0), spec("k2", 0), spec("k2", 0),
		spec("k3", time.Hour), spec("k4", 0), spec("k4", 0), spec("k5", 0), core.ItemSpec{Queue: q})
	// Claim until the claims stop: every lane is then full, rate-limited,
	// not due yet or out of work.
	for range 10 {
		if len(e.claim(e.s, a, q, 10)) == 0 {
			break
		}
	}
	// The truth: the keyed items as Items reads them.
	claimed, waiting := map[string]int64{}, map[string]int64{}
	all, err := e.items(e.ctx, browse.ItemFilter{Queue: q, Limit: browse.MaxListLimit})
	if err != nil {
		e.t.Fatalf("Items: %v", err)
	}
	for _, it := range all {
		switch it.State {
		case core.StateClaimed:
			claimed[it.FlowKey]++
		case core.StateAvailable:
			waiting[it.FlowKey]++
		}
	}
	if claimed["k1"] != 2 || claimed["k4"] != 1 || claimed["k3"] != 0 {
		e.t.Fatalf("claims: %v; want k1 at its default limit 2, k4 at its own 1, k3 none", claimed)
	}
	lanes := func(p browse.LanesParams) browse.Lanes {
		e.t.Helper()
		out, err := e.reader().Lanes(e.ctx, p)
		if err != nil {
			e.t.Fatalf("Lanes(%+v): %v", p, err)
		}
		return out
	}
	// Pages of two, followed to the end: every key once, in order.
	var got []browse.Lane
	var pages int
	for p := (browse.LanesParams{Queue: q, Limit: 2}); ; pages++ {
		page := lanes(p)
		if len(page.Lanes) > 2 {
			e.t.Fatalf("a page of 2 holds %d lanes", len(page.Lanes))
		}
		got = append(got, page.Lanes...)
		if page.Next == "" {
			break
		}
		if pages > 5 {
			e.t.Fatalf("pages do not end: %d so far", pages)
		}
		p.After = page.Next
	}
	var keys []string
	for _, l := range got {
		keys = append(keys, l.Key)
	}
	if !slices.Equal(keys, []string{"k1", "k2", "k3", "k4", "k5"}) {
		e.t.Fatalf("lanes listed %v, want k1 to k5 once each in order", keys)
	}
	first := lanes(browse.LanesParams{Queue: q})
	now := e.now(e.s)
	if first.Now.Before(now.Add(-time.Minute)) || first.Now.After(now.Add(e.clockSlack())) {
		e.t.Errorf("Now %v is not the database clock (%v)", first.Now, now)
	}
	if !first.DefaultSet || first.Default.Concurrency != 2 || first.Default.Key != "" || first.Paused {
		e.t.Errorf("default %+v set %v paused %v; want concurrency 2, set, not paused", first.Default, first.DefaultSet, first.Paused)
	}
	for _, l := range got {
		if l.Claimed != claimed[l.Key] || l.Waiting != waiting[l.Key] || l.ClaimedCapped || l.WaitingCapped {
			e.t.Errorf("%s: claimed %d waiting %d (capped %v %v); the items say %d, %d",
				l.Key, l.Claimed, l.Waiting, l.ClaimedCapped, l.WaitingCapped, claimed[l.Key], waiting[l.Key])
		}
		want, src := core.Limit{Queue: q, Concurrency: 2, Weight: 1}, browse.LimitDefault
		if l.Key == "k4" {
			want, src = core.Limit{Queue: q, Key: "k4", Concurrency: 1, Rate: 1, Per: time.Hour, Weight: 1}, browse.LimitOwn
		}
		if l.Limit != want || l.Source != src {
			e.t.Errorf("%s: limit %+v from %s; want %+v from %s", l.Key, l.Limit, l.Source, want, src)
		}
	}
	byKey := func(k string) browse.Lane {
		i := slices.IndexFunc(got, func(l browse.Lane) bool { return l.Key == k })
		return got[i]
	}
	// k2 and k5 have no work left: no turn, or one that has come (a
	// lane served to its last item keeps its place in line until a claim
	// finds it empty). k3's item is due in an hour, and k4's rate gives
	// its next claim in about an hour: both turns are later.
	for _, k := range []string{"k2", "k5"} {
		if l := byKey(k); l.NextAt.After(first.Now) {
			e.t.Errorf("%s has no work but a turn to come at %v", k, l.NextAt)
		}
	}
	for _, k := range []string{"k3", "k4"} {
		if l := byKey(k); !l.NextAt.After(first.Now.Add(30*time.Minute)) || l.NextAt.After(first.Now.Add(time.Hour+time.Minute)) {
			e.t.Errorf("%s: next turn %v, want about an hour after %v", k, l.NextAt, first.Now)
		}
	}
	// One lane by its key; a key with no lane reads none.
	if one := lanes(browse.LanesParams{Queue: q, Key: "k4"}); len(one.Lanes) != 1 || one.Lanes[0] != byKey("k4") || one.Next != "" {
		e.t.Errorf("Lanes(Key k4) = %+v, want the page's k4", one)
	}
	if none := lanes(browse.LanesParams{Queue: q, Key: "nope"}); len(none.Lanes) != 0 {
		e.t.Errorf("Lanes(Key nope) = %+v, want none", none.Lanes)
	}
	// Counts stop at the cap: k1 has 2 claimed and 1 waiting.
	for _, c := range []struct {
		cap                   int64
		claimed, waiting      int64
		claimCapped, waitCapp bool
	}{{2, 2, 1, false, false}, {1, 1, 1, true, false}} {
		l := lanes(browse.LanesParams{Queue: q, Key: "k1", CountCap: c.cap}).Lanes[0]
		if l.Claimed != c.claimed || l.Waiting != c.waiting || l.ClaimedCapped != c.claimCapped || l.WaitingCapped != c.waitCapp {
			e.t.Errorf("cap %d: k1 %+v", c.cap, l)
		}
	}
	// Without the default, the keys without a limit of their own have none.
	if err := e.s.DeleteLimit(e.ctx, q, ""); err != nil {
		e.t.Fatalf("DeleteLimit: %v", err)
	}
	after := lanes(browse.LanesParams{Queue: q})
	if after.DefaultSet {
		e.t.Errorf("default still set after DeleteLimit: %+v", after.Default)
	}
	for _, l := range after.Lanes {
		if (l.Source == browse.LimitOwn) != (l.Key == "k4") || (l.Key != "k4" && (l.Source != browse.LimitNone || l.Limit != core.Limit{})) {
			e.t.Errorf("%s after DeleteLimit: %+v from %s", l.Key, l.Limit, l.Source)
		}
	}
	// A queue without lanes reads an empty page; a queue is required.
	if empty := lanes(browse.LanesParams{Queue: "l-none"}); len(empty.Lanes) != 0 || empty.DefaultSet || empty.Next != "" {
		e.t.Errorf("Lanes(l-none) = %+v", empty)
	}
	for _, p := range []browse.LanesParams{{}, {Queue: q, Limit: -1}, {Queue: q, CountCap: -1}} {
		if _, err := e.reader().Lanes(e.ctx, p); !errors.Is(err, core.ErrInvalidInput) {
			e.t.Errorf("Lanes(%+v) = %v, want ErrInvalidInput", p, err)
		}
	}
}
