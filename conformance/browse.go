package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
)

// The dashboard's reads: Items under every filter combination, in keyset
// pages that match the items as Get reads them, newest first, with no item
// repeated or skipped, however the pages are cut.
func testBrowseItems(e *env) {
	a := e.owner(e.s)
	var specs []core.ItemSpec
	for i := range 24 {
		specs = append(specs, core.ItemSpec{Queue: []string{"b-one", "b-two", "b-three"}[i%3], Kind: []string{"", "k1", "k2"}[i%3/2+i%2]})
	}
	rc, first, err := e.s.CreateRun(e.ctx, core.RunSpec{Name: "browse"}, core.ItemSpec{Queue: "b-one", Kind: "k1"}, core.ItemSpec{Queue: "b-two"})
	if err != nil {
		e.t.Fatalf("CreateRun: %v", err)
	}
	e.enqueue(e.s, specs...)
	// Move some of b-one and b-two into every other state.
	for _, q := range []string{"b-one", "b-two"} {
		cs := e.claim(e.s, a, q, 5)
		e.complete(e.s, cs[0], `"done"`)
		if err := e.s.Cancel(e.ctx, cs[1].ID); err != nil {
			e.t.Fatalf("Cancel: %v", err)
		}
		if _, err := e.s.Fence(e.ctx, cs[2], func(ctx context.Context, f *core.Fenced) error {
			_, err := f.Fail(ctx, core.FailParams{Error: "boom", Discard: true})
			return err
		}); err != nil {
			e.t.Fatalf("Fail: %v", err)
		}
	}
	// The truth: every item as Get reads it, newest first.
	all, err := e.items(e.ctx, browse.ItemFilter{Limit: browse.MaxListLimit})
	if err != nil {
		e.t.Fatalf("Items: %v", err)
	}
	if len(all) != len(specs)+len(first) {
		e.t.Fatalf("Items lists %d items, want %d", len(all), len(specs)+len(first))
	}
	for i, it := range all {
		if i > 0 && it.ID.String() >= all[i-1].ID.String() {
			e.t.Fatalf("Items not newest first at %d: %s after %s", i, it.ID, all[i-1].ID)
		}
		if got := e.get(it.ID); got.State != it.State || got.Queue != it.Queue || got.Kind != it.Kind || got.Run != it.Run {
			e.t.Fatalf("Items lists %+v, Get reads %+v", it, got)
		}
	}
	for _, queue := range []string{"", "b-one", "b-three", "none"} {
		for _, state := range []core.State{"", core.StateAvailable, core.StateClaimed, core.StateDead, core.StateCompleted, core.StateCancelled} {
			for _, kind := range []string{"", "k1"} {
				for _, run := range []uuid.UUID{uuid.Nil, rc.ID} {
					f := browse.ItemFilter{Queue: queue, State: state, Kind: kind, Run: run}
					var want []uuid.UUID
					for _, it := range all {
						if (queue == "" || it.Queue == queue) && (state == "" || it.State == state) &&
							(kind == "" || it.Kind == kind) && (run == uuid.Nil || it.Run == run) {
							want = append(want, it.ID)
						}
					}
					for _, limit := range []int{1, 4, 0} {
						f.Limit = limit
						// A kind's search bounded at fewer rows than the
						// table holds pages on from where it stopped.
						for _, search := range []int{0, 7} {
							f.SearchRows = search
							if got := e.pageItems(f); !slices.Equal(got, want) {
								e.t.Fatalf("Items(%+v) in pages = %v, want %v", f, got, want)
							}
						}
					}
				}
			}
		}
	}
}

// pageItems reads every page of f, following each page's Next, and
// returns the ids in order. A page that is not a bounded search's is
// short only at the end.
func (e *env) pageItems(f browse.ItemFilter) []uuid.UUID {
	e.t.Helper()
	ids, _ := e.pageItemsWithin(f, 10*browse.MaxListLimit)
	return ids
}

// pageItemsWithin is pageItems that fails past maxPages pages, and says
// how many pages it read.
func (e *env) pageItemsWithin(f browse.ItemFilter, maxPages int) (ids []uuid.UUID, pages int) {
	e.t.Helper()
	var out []uuid.UUID
	for {
		page, err := e.reader().Items(e.ctx, f)
		if err != nil {
			e.t.Fatalf("Items(%+v): %v", f, err)
		}
		pages++
		for _, it := range page.Items {
			out = append(out, it.ID)
		}
		limit := f.Limit
		if limit == 0 {
			limit = browse.DefaultListLimit
		}
		switch {
		case page.Searched && ((f.Kind == "" && f.Tag == "" && f.MetaKey == "") || len(page.Items) >= limit || page.Next == uuid.Nil):
			e.t.Fatalf("Items(%+v) = %d items, Searched, Next %s", f, len(page.Items), page.Next)
		case !page.Searched && (len(page.Items) < limit) != (page.Next == uuid.Nil):
			e.t.Fatalf("Items(%+v) = %d items, Next %s", f, len(page.Items), page.Next)
		case page.Searched && page.Examined < 1:
			e.t.Fatalf("Items(%+v) searched %d rows", f, page.Examined)
		}
		if page.Next == uuid.Nil {
			return out, pages
		}
		if pages >= maxPages || page.Next == f.Before {
			e.t.Fatalf("Items(%+v): paging does not end within %d pages (%d items so far)", f, maxPages, len(out))
		}
		f.Before = page.Next
	}
}

// A kind is searched for among the newest rows of each queue and state, a
// bounded number per call: a rare kind is found page after page, each
// page saying where the search stopped, and a kind that matches nothing
// costs a bounded read that says it searched. A state without a queue is
// one page per queue, merged: paging never repeats or skips.
func testBrowseItemsByKindBounded(e *env) {
	var specs []core.ItemSpec
	for i := range 120 {
		kind := "common"
		if i%37 == 5 {
			kind = "rare"
		}
		specs = append(specs, core.ItemSpec{Queue: []string{"k-a", "k-b", "k-c", "k-d"}[i/30], Kind: kind})
	}
	enq := e.enqueue(e.s, specs...)
	var rare []uuid.UUID
	for i := len(enq) - 1; i >= 0; i-- {
		if specs[i].Kind == "rare" {
			rare = append(rare, enq[i].ID)
		}
	}
	// Enqueue assigns ids in order within a call: check rather than assume.
	slices.SortFunc(rare, func(a, b uuid.UUID) int { return -strings.Compare(a.String(), b.String()) })
	for _, f := range []browse.ItemFilter{
		{Kind: "rare", SearchRows: 10},
		{Kind: "rare", State: core.StateAvailable, SearchRows: 8},
		{Kind: "rare", Queue: "k-b", SearchRows: 3, Limit: 1},
		{Kind: "rare", Queue: "k-a", State: core.StateAvailable, SearchRows: 1},
	} {
		var want []uuid.UUID
		for _, id := range rare {
			if it := e.get(id); f.Queue == "" || it.Queue == f.Queue {
				want = append(want, id)
			}
		}
		if got := e.pageItems(f); !slices.Equal(got, want) {
			e.t.Fatalf("Items(%+v) in pages = %v, want %v", f, got, want)
		}
	}
	page, err := e.reader().Items(e.ctx, browse.ItemFilter{Kind: "nosuch", Queue: "k-c", SearchRows: 10})
	if err != nil {
		e.t.Fatal(err)
	}
	if len(page.Items) != 0 || !page.Searched || page.Next == uuid.Nil || page.Examined > 10 {
		e.t.Fatalf("a kind matching nothing, searched 10 rows of 30 = %d items, Searched %v, Next %s, Examined %d; want none, searched, a place to go on",
			len(page.Items), page.Searched, page.Next, page.Examined)
	}
	if got := e.pageItems(browse.ItemFilter{Kind: "nosuch", SearchRows: 10}); len(got) != 0 {
		e.t.Fatalf("kind nosuch lists %v", got)
	}
	// Items of one state in several queues, paged across the queues.
	a := e.owner(e.s)
	for _, q := range []string{"k-a", "k-c", "k-d"} {
		for _, c := range e.claim(e.s, a, q, 4) {
			e.complete(e.s, c, "")
		}
	}
	all, err := e.items(e.ctx, browse.ItemFilter{Limit: browse.MaxListLimit})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, st := range []core.State{core.StateCompleted, core.StateAvailable} {
		var want []uuid.UUID
		for _, it := range all {
			if it.State == st {
				want = append(want, it.ID)
			}
		}
		for _, limit := range []int{1, 5, 0} {
			if got := e.pageItems(browse.ItemFilter{State: st, Limit: limit}); !slices.Equal(got, want) {
				e.t.Fatalf("Items(state %s, limit %d) in pages = %v, want %v", st, limit, got, want)
			}
		}
	}
}

// Paging through a queue while other stores insert into it and claim from
// it never repeats an item and never skips one that existed when paging
// began: a new item's id is newer than every page already read.
func testBrowseItemsConcurrent(e *env) {
	const queue = "b-busy"
	n := e.scaled(300, 60)
	specs := make([]core.ItemSpec, n)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: queue}
	}
	before := map[uuid.UUID]bool{}
	for _, it := range e.enqueue(e.s, specs...) {
		before[it.ID] = true
	}
	a := e.owner(e.s)
	ctx, stop := context.WithCancel(e.ctx)
	var wg sync.WaitGroup
	for w := range 2 {
		s := e.open(core.Options{})
		wg.Go(func() {
			for ctx.Err() == nil {
				if _, err := s.Enqueue(ctx, core.ItemSpec{Queue: queue}, core.ItemSpec{Queue: queue}); err != nil && ctx.Err() == nil {
					e.t.Errorf("Enqueue: %v", err)
					return
				}
				if w == 1 {
					if _, err := s.Claim(ctx, core.ClaimParams{Queue: queue, Owner: a, Limit: 3, Lease: time.Hour}); err != nil && ctx.Err() == nil {
						e.t.Errorf("Claim: %v", err)
						return
					}
				}
			}
		})
	}
	for _, state := range []core.State{"", core.StateAvailable} {
		seen := map[uuid.UUID]int{}
		f := browse.ItemFilter{Queue: queue, State: state, Limit: 7}
		var last uuid.UUID
		for {
			page, err := e.items(e.ctx, f)
			if err != nil {
				e.t.Fatalf("Items: %v", err)
			}
			for _, it := range page {
				seen[it.ID]++
				if last != uuid.Nil && it.ID.String() >= last.String() {
					e.t.Fatalf("page out of order: %s after %s", it.ID, last)
				}
				last = it.ID
			}
			if len(page) < f.Limit {
				break
			}
			f.Before = page[len(page)-1].ID
		}
		for id, k := range seen {
			if k != 1 {
				e.t.Fatalf("item %s listed %d times", id, k)
			}
		}
		if state == "" {
			for id := range before {
				if seen[id] != 1 {
					e.t.Fatalf("item %s, there before paging began, was skipped", id)
				}
			}
		}
	}
	stop()
	wg.Wait()
}

// Queue summaries: counts exact below the cap and capped at it, the oldest
// available item, the finished items of a window on the database clock,
// pauses, queues known only from the queues table, and keyset pages of
// queues.
func testBrowseQueueSummaries(e *env) {
	a := e.owner(e.s)
	// Four of priority 0, and the oldest available of a higher priority
	// than one due an hour from now: the probes must go past the first.
	e.enqueue(e.s, core.ItemSpec{Queue: "s-a"}, core.ItemSpec{Queue: "s-a"}, core.ItemSpec{Queue: "s-a"}, core.ItemSpec{Queue: "s-a"},
		core.ItemSpec{Queue: "s-a", Priority: 5}, core.ItemSpec{Queue: "s-a", Priority: -3, Delay: time.Hour},
		core.ItemSpec{Queue: "s-b"})
	for _, c := range e.claim(e.s, a, "s-a", 2) {
		e.complete(e.s, c, "")
	}
	if err := e.s.PauseQueue(e.ctx, "s-c"); err != nil {
		e.t.Fatalf("PauseQueue: %v", err)
	}
	sum := func(s *core.Store, p browse.QueueSummaryParams) []browse.QueueSummary {
		e.t.Helper()
		out, err := browse.New(s).QueueSummaries(e.ctx, p)
		if err != nil {
			e.t.Fatalf("QueueSummaries(%+v): %v", p, err)
		}
		return out
	}
	all := sum(e.s, browse.QueueSummaryParams{})
	var names []string
	for _, q := range all {
		names = append(names, q.Queue)
	}
	if !slices.Equal(names, []string{"s-a", "s-b", "s-c"}) {
		e.t.Fatalf("QueueSummaries lists %v, want s-a, s-b, s-c", names)
	}
	now := e.now(e.s)
	for _, q := range all {
		if q.Now.Before(now.Add(-time.Minute)) || q.Now.After(now.Add(e.clockSlack())) {
			e.t.Errorf("%s: Now %v is not the database clock (%v)", q.Queue, q.Now, now)
		}
		if q.Paused != (q.Queue == "s-c") || q.Window != browse.DefaultSummaryWindow {
			e.t.Errorf("%s: Paused %v, Window %v", q.Queue, q.Paused, q.Window)
		}
	}
	sa := all[0]
	if sa.Counts[core.StateAvailable] != 4 || sa.Counts[core.StateCompleted] != 2 || sa.Counts[core.StateDead] != 0 || sa.Capped[core.StateAvailable] {
		e.t.Errorf("s-a counts %v capped %v; want 4 available, 2 completed", sa.Counts, sa.Capped)
	}
	if sa.FinishedInWindow != 2 || sa.FinishedCapped || all[1].FinishedInWindow != 0 {
		e.t.Errorf("finished in window: s-a %d (capped %v), s-b %d; want 2, 0", sa.FinishedInWindow, sa.FinishedCapped, all[1].FinishedInWindow)
	}
	// The oldest available item is the earliest available_at of any
	// priority, as Get reads it.
	var oldest time.Time
	items, err := e.items(e.ctx, browse.ItemFilter{Queue: "s-a", State: core.StateAvailable})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, it := range items {
		if oldest.IsZero() || it.AvailableAt.Before(oldest) {
			oldest = it.AvailableAt
		}
	}
	if !sa.OldestAvailable.Equal(oldest) {
		e.t.Errorf("s-a OldestAvailable %v, want %v", sa.OldestAvailable, oldest)
	}
	if !all[2].OldestAvailable.IsZero() || all[2].Counts[core.StateAvailable] != 0 {
		e.t.Errorf("s-c (no items) = %+v", all[2])
	}
	// Capped exactly at the cap: 4 available is exact under a cap of 4,
	// and capped under 3.
	for _, c := range []struct {
		cap    int64
		count  int64
		capped bool
	}{{5, 4, false}, {4, 4, false}, {3, 3, true}, {1, 1, true}} {
		one := sum(e.s, browse.QueueSummaryParams{Queue: "s-a", CountCap: c.cap})
		if len(one) != 1 || one[0].Counts[core.StateAvailable] != c.count || one[0].Capped[core.StateAvailable] != c.capped {
			e.t.Errorf("cap %d: %+v; want %d available, capped %v", c.cap, one, c.count, c.capped)
		}
		if c.cap < 2 && (one[0].FinishedInWindow != c.cap || !one[0].FinishedCapped) {
			e.t.Errorf("cap %d: finished %d capped %v; want the cap, capped", c.cap, one[0].FinishedInWindow, one[0].FinishedCapped)
		}
	}
	// The window is the database's: a store whose clock is an hour on sees
	// nothing finished in the last half hour.
	if later := sum(e.at(time.Hour), browse.QueueSummaryParams{Queue: "s-a", Window: 30 * time.Minute}); len(later) != 1 || later[0].FinishedInWindow != 0 {
		e.t.Errorf("an hour later, finished in the last 30 minutes = %+v; want 0", later)
	}
	if later := sum(e.at(time.Hour), browse.QueueSummaryParams{Queue: "s-a", Window: 2 * time.Hour}); len(later) != 1 || later[0].FinishedInWindow != 2 {
		e.t.Errorf("an hour later, finished in the last 2 hours = %+v; want 2", later)
	}
	// Pages of queues, and a queue that does not exist.
	if p := sum(e.s, browse.QueueSummaryParams{Limit: 2}); len(p) != 2 || p[1].Queue != "s-b" {
		e.t.Errorf("first page of 2 = %+v", p)
	}
	if p := sum(e.s, browse.QueueSummaryParams{After: "s-b", Limit: 2}); len(p) != 1 || p[0].Queue != "s-c" {
		e.t.Errorf("page after s-b = %+v", p)
	}
	if p := sum(e.s, browse.QueueSummaryParams{Queue: "s-none"}); len(p) != 0 {
		e.t.Errorf("summary of a queue with no items nor row = %+v", p)
	}
}

// Owners: keyset pages by id, the heartbeat's age on the database clock
// (an owner registered by a store whose clock is two hours behind has a
// heartbeat two hours old), the claims each holds, and the name each
// registered with: none, a short one, and one of MaxOwnerNameLen
// characters of two bytes each (a column sized in bytes would refuse it).
// A name no database could store is refused with an *core.InputError and
// registers nothing.
func testBrowseOwners(e *env) {
	old := e.owner(e.at(-2 * time.Hour))
	register := func(name string) (uuid.UUID, error) {
		return e.s.RegisterOwner(e.ctx, core.RegisterOwnerParams{Host: "conformance", Name: name})
	}
	fresh, err := register("billing worker")
	if err != nil {
		e.t.Fatalf("RegisterOwner: %v", err)
	}
	longName := strings.Repeat("é", core.MaxOwnerNameLen)
	long, err := register(longName)
	if err != nil {
		e.t.Fatalf("RegisterOwner with a %d-character name: %v", core.MaxOwnerNameLen, err)
	}
	for _, bad := range []string{strings.Repeat("a", core.MaxOwnerNameLen+1), "a\x00b", "\xff"} {
		var ie *core.InputError
		if _, err := register(bad); !errors.As(err, &ie) || ie.Field != "Name" {
			e.t.Errorf("RegisterOwner with name %.20q: %v, want an *InputError on Name", bad, err)
		}
	}
	e.enqueue(e.s, core.ItemSpec{Queue: "o"}, core.ItemSpec{Queue: "o"}, core.ItemSpec{Queue: "o"}, core.ItemSpec{Queue: "o"})
	cs := e.claimAll(e.s, fresh, "o", 4)
	e.complete(e.s, cs[0], "")
	var got []browse.OwnerInfo
	p := browse.OwnersParams{Limit: 1}
	for {
		page, err := e.reader().Owners(e.ctx, p)
		if err != nil {
			e.t.Fatalf("Owners: %v", err)
		}
		got = append(got, page...)
		if len(page) < p.Limit {
			break
		}
		p.After = page[0].ID
	}
	if len(got) != 3 || got[0].ID != old || got[1].ID != fresh || got[2].ID != long {
		e.t.Fatalf("Owners = %+v; want %s, %s then %s", got, old, fresh, long)
	}
	if got[0].Name != "" || got[1].Name != "billing worker" || got[2].Name != longName {
		e.t.Errorf("owner names %q, %q, %.20q...; want none, %q and %d × é", got[0].Name, got[1].Name, got[2].Name, "billing worker", core.MaxOwnerNameLen)
	}
	slack := e.clockSlack() + time.Minute
	if age := got[0].HeartbeatAge; age < 2*time.Hour-e.clockSlack() || age > 2*time.Hour+slack {
		e.t.Errorf("old owner's heartbeat age %v, want about 2h", age)
	}
	if age := got[1].HeartbeatAge; age < -e.clockSlack() || age > slack {
		e.t.Errorf("fresh owner's heartbeat age %v, want about 0", age)
	}
	if got[0].Claims != 0 || got[1].Claims != 3 || got[2].Claims != 0 || got[1].Host != "conformance" || got[1].PID == 0 {
		e.t.Errorf("owners = %+v; want 0 and 3 claims", got)
	}
}

// Runs in keyset pages under each filter, and a run's barriers in id order.
func testBrowseRuns(e *env) {
	a := e.owner(e.s)
	var ids []uuid.UUID
	for i := range 5 {
		rc, _, err := e.s.CreateRun(e.ctx, core.RunSpec{Name: []string{"r-a", "r-b"}[i%2]}, core.ItemSpec{Queue: fmt.Sprintf("r%d", i)})
		if err != nil {
			e.t.Fatalf("CreateRun: %v", err)
		}
		ids = append(ids, rc.ID)
	}
	if _, ok, err := e.s.UpdateRun(e.ctx, core.RunUpdate{Run: ids[2], From: []core.RunState{core.RunRunning}, To: core.RunHalted, HaltReason: "test"}); err != nil || !ok {
		e.t.Fatalf("UpdateRun: %v %v", ok, err)
	}
	for _, c := range []struct {
		f    browse.RunFilter
		want []uuid.UUID
	}{
		{browse.RunFilter{}, []uuid.UUID{ids[4], ids[3], ids[2], ids[1], ids[0]}},
		{browse.RunFilter{Name: "r-a"}, []uuid.UUID{ids[4], ids[2], ids[0]}},
		{browse.RunFilter{Name: "r-a", State: core.RunRunning}, []uuid.UUID{ids[4], ids[0]}},
		{browse.RunFilter{State: core.RunHalted}, []uuid.UUID{ids[2]}},
		{browse.RunFilter{Name: "r-c"}, nil},
	} {
		for _, limit := range []int{1, 2, 0} {
			f := c.f
			f.Limit = limit
			var got []uuid.UUID
			for {
				page, err := e.reader().Runs(e.ctx, f)
				if err != nil {
					e.t.Fatalf("Runs(%+v): %v", f, err)
				}
				for _, r := range page {
					got = append(got, r.ID)
				}
				if len(page) < max(limit, 1) || limit == 0 {
					break
				}
				if len(got) > 100 {
					e.t.Fatalf("Runs(%+v): paging does not end", f)
				}
				f.Before = page[len(page)-1].ID
			}
			if !slices.Equal(got, c.want) {
				e.t.Errorf("Runs(%+v) = %v, want %v", f, got, c.want)
			}
		}
	}
	// Barriers of run 0: its item opens three; run 1's item opens one.
	open := func(queue string, names ...string) []uuid.UUID {
		c := e.claimOne(e.s, a, queue)
		var out []uuid.UUID
		if _, err := e.s.Fence(e.ctx, c, func(ctx context.Context, f *core.Fenced) error {
			for _, n := range names {
				b, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: n, Join: core.JoinSpec{Queue: queue}})
				if err != nil {
					return err
				}
				out = append(out, b.ID)
			}
			return nil
		}); err != nil {
			e.t.Fatalf("OpenBarrier: %v", err)
		}
		return out
	}
	want := open("r0", "x", "y", "z")
	open("r1", "x")
	var got []uuid.UUID
	p := browse.RunBarriersParams{Run: ids[0], Limit: 2}
	for {
		page, err := e.reader().RunBarriers(e.ctx, p)
		if err != nil {
			e.t.Fatalf("RunBarriers: %v", err)
		}
		for _, b := range page {
			if b.Run != ids[0] {
				e.t.Errorf("RunBarriers of %s lists %+v", ids[0], b)
			}
			got = append(got, b.ID)
		}
		if len(page) < p.Limit {
			break
		}
		p.After = page[len(page)-1].ID
	}
	slices.SortFunc(want, func(x, y uuid.UUID) int { return strings.Compare(x.String(), y.String()) })
	if !slices.Equal(got, want) {
		e.t.Errorf("RunBarriers = %v, want %v", got, want)
	}
}

// Bad input to the dashboard's reads is an *InputError naming the field.
func testBrowseBadInput(e *env) {
	long := strings.Repeat("q", 129)
	for _, c := range []struct {
		field string
		err   error
	}{
		{"Limit", e.err(e.items(e.ctx, browse.ItemFilter{Limit: -1}))},
		{"Limit", e.err(e.items(e.ctx, browse.ItemFilter{Limit: browse.MaxListLimit + 1}))},
		{"State", e.err(e.items(e.ctx, browse.ItemFilter{State: "running"}))},
		{"Queue", e.err(e.items(e.ctx, browse.ItemFilter{Queue: long}))},
		{"Kind", e.err(e.items(e.ctx, browse.ItemFilter{Kind: long}))},
		{"SearchRows", e.err(e.items(e.ctx, browse.ItemFilter{Kind: "k", SearchRows: -1}))},
		{"SearchRows", e.err(e.items(e.ctx, browse.ItemFilter{Kind: "k", SearchRows: browse.ItemSearchRows + 1}))},
		{"Queue", e.err(e.items(e.ctx, browse.ItemFilter{Queue: "a\x00b"}))},
		{"Limit", e.err(e.reader().Runs(e.ctx, browse.RunFilter{Limit: 1 << 30}))},
		{"State", e.err(e.reader().Runs(e.ctx, browse.RunFilter{State: "dead"}))},
		{"Name", e.err(e.reader().Runs(e.ctx, browse.RunFilter{Name: long}))},
		{"Run", e.err(e.reader().RunBarriers(e.ctx, browse.RunBarriersParams{}))},
		{"Limit", e.err(e.reader().RunBarriers(e.ctx, browse.RunBarriersParams{Run: uuid.New(), Limit: -5}))},
		{"Limit", e.err(e.reader().Owners(e.ctx, browse.OwnersParams{Limit: -1}))},
		{"CountCap", e.err(e.reader().QueueSummaries(e.ctx, browse.QueueSummaryParams{CountCap: -1}))},
		{"CountCap", e.err(e.reader().QueueSummaries(e.ctx, browse.QueueSummaryParams{CountCap: browse.MaxCountCap + 1}))},
		{"Window", e.err(e.reader().QueueSummaries(e.ctx, browse.QueueSummaryParams{Window: -time.Second}))},
		{"Queue", e.err(e.reader().QueueSummaries(e.ctx, browse.QueueSummaryParams{Queue: long}))},
		{"After", e.err(e.reader().QueueSummaries(e.ctx, browse.QueueSummaryParams{After: long}))},
		{"Limit", e.err(e.reader().QueueSummaries(e.ctx, browse.QueueSummaryParams{Limit: 501}))},
	} {
		var ie *core.InputError
		if !errors.As(c.err, &ie) || ie.Field != c.field {
			e.t.Errorf("got %v, want an *InputError on %s", c.err, c.field)
		}
	}
}

// err keeps the error of a read.
func (e *env) err(_ any, err error) error { return err }

// reader reads e's store as the dashboard does.
func (e *env) reader() *browse.Reader { return browse.New(e.s) }

// items is the items of the page of f.
func (e *env) items(ctx context.Context, f browse.ItemFilter) ([]core.Item, error) {
	page, err := e.reader().Items(ctx, f)
	return page.Items, err
}

// A kind's search pages by the rows it searched, not by the matches it
// found: each page examines at most SearchRows rows, and covers them all,
// however unevenly the items are spread over the queues and states. Eight
// queues filled one after the other (each queue's ids a range of its
// own) are covered in about N/SearchRows pages, every match listed once.
func testBrowseItemsByKindCoversPerPage(e *env) {
	const queues, perQueue, searchRows = 8, 60, 100
	var specs []core.ItemSpec
	for q := range queues {
		for i := range perQueue {
			kind := "common"
			if (q*perQueue+i)%13 == 4 {
				kind = "rare"
			}
			specs = append(specs, core.ItemSpec{Queue: fmt.Sprintf("cover-%d", q), Kind: kind})
		}
	}
	// One queue after the other: each enqueue's ids are newer than the
	// last's.
	for q := range queues {
		e.enqueue(e.s, specs[q*perQueue:(q+1)*perQueue]...)
	}
	// Spread some over a second state.
	a := e.owner(e.s)
	for _, q := range []string{"cover-2", "cover-7"} {
		for _, c := range e.claim(e.s, a, q, 7) {
			e.complete(e.s, c, "")
		}
	}
	all, err := e.items(e.ctx, browse.ItemFilter{Limit: browse.MaxListLimit})
	if err != nil {
		e.t.Fatal(err)
	}
	var want []uuid.UUID
	for _, it := range all {
		if it.Kind == "rare" {
			want = append(want, it.ID)
		}
	}
	n := len(specs)
	for _, limit := range []int{0, 3} {
		f := browse.ItemFilter{Kind: "rare", SearchRows: searchRows, Limit: limit}
		// Every row is searched once: n/searchRows pages, and one more
		// per page cut short by the limit.
		maxPages := (n+searchRows-1)/searchRows + 1
		if limit > 0 {
			maxPages += len(want) / limit
		}
		got, pages := e.pageItemsWithin(f, maxPages)
		if !slices.Equal(got, want) {
			e.t.Fatalf("Items(%+v) in %d pages = %v, want %v", f, pages, got, want)
		}
	}
	// Each page examines at most SearchRows rows.
	f := browse.ItemFilter{Kind: "nosuch", SearchRows: searchRows}
	for pages := 0; ; pages++ {
		page, err := e.reader().Items(e.ctx, f)
		if err != nil {
			e.t.Fatal(err)
		}
		if page.Examined > searchRows || len(page.Items) != 0 {
			e.t.Fatalf("kind nosuch, page %d: %d items, examined %d rows, want none and at most %d", pages, len(page.Items), page.Examined, searchRows)
		}
		if page.Next == uuid.Nil {
			break
		}
		if pages > n/searchRows+1 {
			e.t.Fatalf("kind nosuch: %d pages for %d rows searching %d a page", pages, n, searchRows)
		}
		f.Before = page.Next
	}
}
