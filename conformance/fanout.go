package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// Guarantee 5: a dispatch that stopped half way resumes from its saved
// cursor, under a new holder, without duplicates; a batch from a cursor the
// barrier has left is refused; a repeated page inserts nothing.
func testFanOutResume(e *env) {
	const queue, kidsQ = "fanout", "fanout-kids"
	const pages, perPage, failAt = 10, 100, 4
	cursorOf := func(p int) string {
		if p == 0 {
			return ""
		}
		return fmt.Sprintf("page-%d", p)
	}
	pageOf := map[string]int{}
	for p := range pages {
		pageOf[cursorOf(p)] = p
	}
	errSource := errors.New("source broke")
	var calls []string
	failing := true
	next := func(_ context.Context, cursor string) (core.ChildPage, error) {
		calls = append(calls, cursor)
		p, ok := pageOf[cursor]
		if !ok {
			return core.ChildPage{}, fmt.Errorf("asked for unknown cursor %q", cursor)
		}
		if p == failAt && failing {
			failing = false
			return core.ChildPage{}, errSource
		}
		page := make([]core.ChildSpec, perPage)
		for i := range page {
			page[i] = core.ChildSpec{Key: fmt.Sprintf("c%04d", p*perPage+i), Queue: kidsQ}
		}
		return core.ChildPage{Children: page, Next: cursorOf(p + 1), Done: p == pages-1}, nil
	}
	wantCalls := func(step string, from, to int) {
		e.t.Helper()
		var want []string
		for p := from; p < to; p++ {
			want = append(want, cursorOf(p))
		}
		if !slices.Equal(calls, want) {
			e.t.Errorf("%s: the source was asked for cursors %q, want %q", step, calls, want)
		}
		calls = nil
	}
	spec := core.BarrierSpec{Name: "fan", Join: core.JoinSpec{Queue: "fanout-join"}}
	params := core.ExpandParams{Barrier: spec, Next: next, CompleteParent: true, Result: []byte(`{"expanded":true}`)}

	parent := e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	a := e.owner(e.s)
	ca := e.claimOne(e.s, a, queue)
	r, err := e.s.Expand(e.ctx, ca, params)
	if !errors.Is(err, errSource) {
		e.t.Fatalf("Expand with a source failing at page %d = %v, want the source's error", failAt, err)
	}
	wantCalls("first dispatch", 0, failAt+1)
	b := e.barrier(r.Barrier.ID)
	if b.Expected != failAt*perPage || b.Cursor != cursorOf(failAt) || b.Sealed || r.Inserted != failAt*perPage || r.Batches != failAt {
		e.t.Fatalf("after the failed dispatch: barrier expected %d, cursor %q, sealed %v; result inserted %d in %d batches; want %d, %q, not sealed, %d in %d",
			b.Expected, b.Cursor, b.Sealed, r.Inserted, r.Batches, failAt*perPage, cursorOf(failAt), failAt*perPage, failAt)
	}

	// A dies; B claims the parent again on the reaper's clock.
	future := e.at(time.Hour)
	if r, err := future.Reap(e.ctx, core.ReapParams{StaleAfter: 30 * time.Minute}); err != nil || r.Crashed != 1 {
		e.t.Fatalf("Reap = %+v, %v; want the parent released", r, err)
	}
	bo := e.owner(future)
	cb := e.claimOne(future, bo, queue)
	if cb.ID != parent {
		e.t.Fatalf("B claimed %s, want the parent %s", cb.ID, parent)
	}
	// A's stale dispatch does nothing.
	if _, err := e.s.Expand(e.ctx, ca, params); !errors.Is(err, core.ErrClaimLost) {
		e.t.Errorf("stale holder's Expand = %v, want ErrClaimLost", err)
	}
	wantCalls("stale dispatch", 0, 0)
	if got := e.barrier(b.ID); got.Expected != b.Expected || got.Cursor != b.Cursor {
		e.t.Errorf("stale dispatch moved the barrier: expected %d, cursor %q", got.Expected, got.Cursor)
	}

	r, err = future.Expand(e.ctx, cb, params)
	if err != nil {
		e.t.Fatalf("resumed Expand: %v", err)
	}
	wantCalls("resumed dispatch", failAt, pages)
	total := pages * perPage
	if r.Barrier.ID != b.ID || r.Barrier.Expected != int64(total) || !r.Barrier.Sealed || r.Inserted != total-failAt*perPage || r.Batches != pages-failAt || r.Fired {
		e.t.Errorf("resumed Expand: barrier %s (want %s) expected %d, sealed %v; inserted %d in %d batches, fired %v; want %d, sealed, %d in %d, not fired",
			r.Barrier.ID, b.ID, r.Barrier.Expected, r.Barrier.Sealed, r.Inserted, r.Batches, r.Fired, total, total-failAt*perPage, pages-failAt)
	}
	all := e.children(b.ID)
	keys := map[string]int{}
	for _, k := range all {
		keys[k.Key]++
	}
	if len(all) != total || len(keys) != total {
		e.t.Errorf("%d children with %d distinct keys, want %d of each", len(all), len(keys), total)
	}
	for i := range total {
		if k := fmt.Sprintf("%s/c%04d", b.ID, i); keys[k] != 1 {
			e.t.Errorf("child key %s exists %d times, want once", k, keys[k])
			break
		}
	}
	if n := e.sqlCount("SELECT COUNT(*) FROM {items} WHERE barrier_id = ?", e.d.UUID(b.ID)); n != int64(total) {
		e.t.Errorf("%d items report to the barrier, want %d", n, total)
	}
	if it := e.get(parent); it.State != core.StateCompleted || it.ClaimToken != cb.Token {
		e.t.Errorf("parent after the dispatch: %s with token %s, want completed by B (%s)", it.State, it.ClaimToken, cb.Token)
	}

	e.run("AddChildrenByCursor", func(e *env) {
		const queue, kidsQ = "direct", "direct-kids"
		e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
		c := e.claimOne(e.s, e.owner(e.s), queue)
		spec := core.BarrierSpec{Name: "direct", Join: core.JoinSpec{Queue: "direct-join"}}
		var bar core.Barrier
		fence := func(step string, fn func(ctx context.Context, f *core.Fenced) error) error {
			e.t.Helper()
			held, err := e.s.Fence(e.ctx, c, fn)
			if !held {
				e.t.Fatalf("%s: fence not held", step)
			}
			return err
		}
		add := func(from, to string, n int) func(ctx context.Context, f *core.Fenced) (int, error) {
			return func(ctx context.Context, f *core.Fenced) (int, error) {
				return f.AddChildren(ctx, core.AddChildrenParams{Barrier: bar.ID, From: from, To: to, Children: kids(kidsQ, "k", n)})
			}
		}
		expect := func(step string, expected int64, cursor string) {
			e.t.Helper()
			if got := e.barrier(bar.ID); got.Expected != expected || got.Cursor != cursor {
				e.t.Errorf("%s: barrier expected %d, cursor %q; want %d, %q", step, got.Expected, got.Cursor, expected, cursor)
			}
			if n := e.total(kidsQ); n != expected {
				e.t.Errorf("%s: %d children exist, want %d", step, n, expected)
			}
		}

		var n int
		err := fence("first page", func(ctx context.Context, f *core.Fenced) error {
			var err error
			if bar, err = f.OpenBarrier(ctx, spec); err != nil {
				return err
			}
			n, err = add("", "c1", 5)(ctx, f)
			return err
		})
		if err != nil || n != 5 {
			e.t.Fatalf("first page: %d inserted, %v; want 5", n, err)
		}
		expect("first page", 5, "c1")

		err = fence("same page again", func(ctx context.Context, f *core.Fenced) error {
			n, err = add("", "c1", 5)(ctx, f)
			return err
		})
		if !errors.Is(err, core.ErrCursorMoved) {
			e.t.Errorf("the same page again from the old cursor = %d, %v; want ErrCursorMoved", n, err)
		}
		expect("after a refused page", 5, "c1")

		err = fence("repeated keys", func(ctx context.Context, f *core.Fenced) error {
			n, err = add("c1", "c2", 5)(ctx, f)
			return err
		})
		if err != nil || n != 0 {
			e.t.Errorf("a page of keys already added = %d inserted, %v; want 0", n, err)
		}
		expect("after repeated keys", 5, "c2")

		err = fence("one new key", func(ctx context.Context, f *core.Fenced) error {
			n, err = add("c2", "c3", 6)(ctx, f)
			return err
		})
		if err != nil || n != 1 {
			e.t.Errorf("a page with one new key = %d inserted, %v; want 1", n, err)
		}
		expect("after one new key", 6, "c3")

		var again core.Barrier
		var fired bool
		err = fence("reopen and seal", func(ctx context.Context, f *core.Fenced) error {
			var err error
			if again, err = f.OpenBarrier(ctx, spec); err != nil {
				return err
			}
			fired, err = f.Seal(ctx, bar.ID)
			return err
		})
		if err != nil || again.ID != bar.ID || again.Expected != 6 || fired {
			e.t.Errorf("OpenBarrier again = %s (expected %d), seal fired %v, %v; want the same barrier %s with 6, not fired", again.ID, again.Expected, fired, err, bar.ID)
		}
		err = fence("after the seal", func(ctx context.Context, f *core.Fenced) error {
			_, err := add("c3", "c4", 7)(ctx, f)
			return err
		})
		if !errors.Is(err, core.ErrBarrierSealed) {
			e.t.Errorf("AddChildren after the seal = %v, want ErrBarrierSealed", err)
		}
		expect("after the seal", 6, "c3")
	})
}

// Guarantee 6: every terminal transition of every child counts once at its
// barrier, under concurrent completions, failures, cancellations and
// crashes, and the barrier fires exactly once.
func testFanInExactlyOnce(e *env) {
	const parentQ, kidsQ, holdQ, doomedQ, joinQ = "fanin", "fanin-kids", "fanin-hold", "fanin-doomed", "fanin-join"
	const workers = 12
	n := e.scaled(2000, 100)
	fateOf := func(i int) string {
		switch i % 10 {
		case 0:
			return "crash" // held by an owner that dies; MaxCrashes 1: dead
		case 1:
			return "cancel" // never claimed; cancelled by id
		case 2:
			return "race" // cancelled by id while workers complete it
		case 3:
			return "fail" // failed with Discard: dead
		}
		return "complete"
	}
	specs := make([]core.ChildSpec, n)
	want := map[string]int{}
	for i := range specs {
		fate := fateOf(i)
		want[fate]++
		q := kidsQ
		switch fate {
		case "crash":
			q = doomedQ
		case "cancel":
			q = holdQ
		}
		specs[i] = core.ChildSpec{Key: fmt.Sprintf("c%05d", i), Queue: q, Payload: json.RawMessage(fmt.Sprintf(`{"fate":%q}`, fate))}
	}
	e.enqueueOne(e.s, core.ItemSpec{Queue: parentQ})
	pc := e.claimOne(e.s, e.owner(e.s), parentQ)
	r, err := e.s.Expand(e.ctx, pc, core.ExpandParams{
		Barrier: core.BarrierSpec{Name: "fanin", Join: core.JoinSpec{Queue: joinQ}},
		Next: func(_ context.Context, cursor string) (core.ChildPage, error) {
			from := 0
			if cursor != "" {
				if _, err := fmt.Sscanf(cursor, "%d", &from); err != nil {
					return core.ChildPage{}, err
				}
			}
			to := min(from+500, n)
			return core.ChildPage{Children: specs[from:to], Next: fmt.Sprint(to), Done: to == n}, nil
		},
		CompleteParent: true,
	})
	if err != nil || r.Barrier.Expected != int64(n) {
		e.t.Fatalf("Expand into %d children: expected %d, %v", n, r.Barrier.Expected, err)
	}
	bid := r.Barrier.ID
	fate := map[uuid.UUID]string{}
	var toCancel []uuid.UUID
	for _, k := range e.children(bid) {
		var p struct{ Fate string }
		if err := json.Unmarshal(k.Payload, &p); err != nil {
			e.t.Fatalf("child payload %s: %v", k.Payload, err)
		}
		fate[k.ID] = p.Fate
		if p.Fate == "cancel" || p.Fate == "race" {
			toCancel = append(toCancel, k.ID)
		}
	}
	rand.Shuffle(len(toCancel), func(i, j int) { toCancel[i], toCancel[j] = toCancel[j], toCancel[i] })

	// The doomed owner holds every crash child, on today's clock.
	doomed := e.claimLease(e.s, e.owner(e.s), doomedQ, want["crash"]+1, 24*time.Hour)
	if len(doomed) != want["crash"] {
		e.t.Fatalf("the doomed owner claimed %d, want %d", len(doomed), want["crash"])
	}

	// Everyone else works an hour later, where the doomed owner is stale
	// and the workers are fresh.
	w := e.at(time.Hour)
	var (
		wg         sync.WaitGroup
		start      = make(chan struct{})
		mu         sync.Mutex
		lostRaces  int
		crashed    int
		deadLetter int
		claimed    atomic.Int64
	)
	for i := range workers {
		wg.Go(func() {
			owner, err := w.RegisterOwner(e.ctx, core.RegisterOwnerParams{Host: "conformance"})
			if err != nil {
				e.t.Errorf("worker %d: RegisterOwner: %v", i, err)
				return
			}
			rng := rand.New(rand.NewPCG(uint64(i), rand.Uint64()))
			<-start
			for {
				cs, err := w.Claim(e.ctx, core.ClaimParams{Queue: kidsQ, Owner: owner, Limit: 5 + rng.IntN(46), Lease: 10 * time.Minute})
				if err != nil {
					e.t.Errorf("worker %d: Claim: %v", i, err)
					return
				}
				if len(cs) == 0 {
					return
				}
				if claimed.Add(int64(len(cs))) > int64(n) {
					e.t.Errorf("worker %d: more claims than children: finished children are claimed again", i)
					return
				}
				var comps []core.Completion
				for _, c := range cs {
					if fate[c.ID] != "fail" {
						comps = append(comps, core.Completion{Claim: c, Result: json.RawMessage(`{"ok":true}`)})
						continue
					}
					if dead, err := w.Fail(e.ctx, c, core.FailParams{Error: "discarded", Discard: true}); err != nil || !dead {
						e.t.Errorf("worker %d: Fail(Discard) = %v, %v; want dead", i, dead, err)
					}
				}
				lost, err := w.CompleteMany(e.ctx, comps)
				if err != nil {
					e.t.Errorf("worker %d: CompleteMany: %v", i, err)
					return
				}
				for _, id := range lost {
					if fate[id] != "race" {
						e.t.Errorf("worker %d: completion of %s (fate %s) lost its claim", i, id, fate[id])
					}
				}
				mu.Lock()
				lostRaces += len(lost)
				mu.Unlock()
			}
		})
	}
	wg.Go(func() {
		<-start
		for _, id := range toCancel {
			err := w.Cancel(e.ctx, id)
			switch {
			case err == nil:
			case errors.Is(err, core.ErrFinished) && fate[id] == "race":
			default:
				e.t.Errorf("Cancel(%s, fate %s): %v", id, fate[id], err)
			}
		}
	})
	wg.Go(func() {
		<-start
		for pass := 0; pass < 100; pass++ {
			r, err := w.Reap(e.ctx, core.ReapParams{StaleAfter: 30 * time.Minute, MaxCrashes: 1})
			if err != nil {
				e.t.Errorf("Reap: %v", err)
				return
			}
			mu.Lock()
			crashed += r.Crashed
			deadLetter += r.DeadLettered
			done := crashed >= want["crash"] || (pass > 0 && r.Crashed == 0)
			mu.Unlock()
			if r.TimedOut != 0 {
				e.t.Errorf("Reap timed out %d claims of live workers", r.TimedOut)
			}
			if done {
				return
			}
		}
	})
	close(start)
	wg.Wait()
	if crashed != want["crash"] || deadLetter != want["crash"] {
		e.t.Errorf("reaper released %d crashed claims, %d dead-lettered; want %d of each", crashed, deadLetter, want["crash"])
	}

	final := e.children(bid)
	if len(final) != n {
		e.t.Fatalf("%d children, want %d", len(final), n)
	}
	states := map[core.State]int64{}
	for _, k := range final {
		states[k.State]++
		f := fate[k.ID]
		ok := false
		switch f {
		case "crash":
			ok = k.State == core.StateDead && k.CrashCount == 1
		case "cancel":
			ok = k.State == core.StateCancelled
		case "race":
			ok = k.State == core.StateCancelled || k.State == core.StateCompleted
		case "fail":
			ok = k.State == core.StateDead && k.CrashCount == 0
		case "complete":
			ok = k.State == core.StateCompleted
		}
		if !ok {
			e.t.Errorf("child %s (fate %s) ended %s with %d crashes", k.ID, f, k.State, k.CrashCount)
		}
	}
	b := e.barrier(bid)
	if b.Expected != int64(n) || b.Arrived != states[core.StateCompleted] || b.Failed != states[core.StateDead]+states[core.StateCancelled] || b.Arrived+b.Failed != int64(n) {
		e.t.Errorf("barrier: expected %d, arrived %d, failed %d; children: %v; want expected %d, arrived = completed, failed = dead + cancelled, summing to %d",
			b.Expected, b.Arrived, b.Failed, states, n, n)
	}
	if !b.Fired() || b.JoinItemID == uuid.Nil {
		e.t.Fatalf("barrier did not fire (fired at %v, join %s)", b.FiredAt, b.JoinItemID)
	}
	if k := e.joinsOf(bid); k != 1 {
		e.t.Errorf("%d join items, want exactly 1", k)
	}
	if j := e.get(b.JoinItemID); j.JoinOf != bid || j.Queue != joinQ || j.State != core.StateAvailable {
		e.t.Errorf("join item: join of %s, queue %s, %s; want join of %s in %s, available", j.JoinOf, j.Queue, j.State, bid, joinQ)
	}
	ws, es := w.Stats(), e.s.Stats()
	e.t.Logf("%d children: %v; %d completions lost to cancellation; %d transaction retries, at most %d attempts for one transaction",
		n, states, lostRaces, ws.Retries+es.Retries, max(ws.MostAttempts, es.MostAttempts))
}

// Guarantee 6: a barrier whose children all finished before the seal, or
// that has none, fires at the seal, once.
func testFanInFiresAtSeal(e *env) {
	e.run("ChildrenDoneBeforeSeal", func(e *env) {
		const queue, kidsQ = "seal", "seal-kids"
		parent := e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
		o := e.owner(e.s)
		pc := e.claimOne(e.s, o, queue)
		var bar core.Barrier
		held, err := e.s.Fence(e.ctx, pc, func(ctx context.Context, f *core.Fenced) error {
			var err error
			if bar, err = f.OpenBarrier(ctx, core.BarrierSpec{Name: "late", Join: core.JoinSpec{Queue: "seal-join"}}); err != nil {
				return err
			}
			n, err := f.AddChildren(ctx, core.AddChildrenParams{Barrier: bar.ID, To: "all", Children: kids(kidsQ, "k", 3)})
			if err == nil && n != 3 {
				err = fmt.Errorf("AddChildren inserted %d, want 3", n)
			}
			return err
		})
		if !held || err != nil {
			e.t.Fatalf("Fence adding children = held %v, %v", held, err)
		}
		for _, c := range e.claimAll(e.s, o, kidsQ, 3) {
			e.complete(e.s, c, `{"ok":true}`)
		}
		if b := e.barrier(bar.ID); b.Arrived != 3 || b.Expected != 3 || b.Sealed || b.Fired() || e.joinsOf(bar.ID) != 0 {
			e.t.Fatalf("before the seal: arrived %d of %d, sealed %v, fired %v; want 3 of 3, not sealed, not fired, no join", b.Arrived, b.Expected, b.Sealed, b.Fired())
		}
		var fired, again bool
		held, err = e.s.Fence(e.ctx, pc, func(ctx context.Context, f *core.Fenced) error {
			var err error
			if fired, err = f.Seal(ctx, bar.ID); err != nil {
				return err
			}
			if again, err = f.Seal(ctx, bar.ID); err != nil {
				return err
			}
			return f.Complete(ctx, nil)
		})
		if !held || err != nil || !fired || again {
			e.t.Fatalf("sealing fence = held %v, %v; seal fired %v, second seal fired %v; want fired once", held, err, fired, again)
		}
		b := e.barrier(bar.ID)
		if !b.Sealed || !b.Fired() || b.JoinItemID == uuid.Nil || e.joinsOf(bar.ID) != 1 {
			e.t.Fatalf("after the seal: sealed %v, fired %v, join %s, %d joins; want sealed, fired, one join", b.Sealed, b.Fired(), b.JoinItemID, e.joinsOf(bar.ID))
		}
		if j := e.get(b.JoinItemID); j.JoinOf != bar.ID || j.Queue != "seal-join" || j.State != core.StateAvailable {
			e.t.Errorf("join item: join of %s in %s, %s", j.JoinOf, j.Queue, j.State)
		}
		if it := e.get(parent); it.State != core.StateCompleted {
			e.t.Errorf("parent is %s, want completed", it.State)
		}
	})

	e.run("NoChildren", func(e *env) {
		const queue = "empty"
		e.enqueue(e.s, make2n(queue, 1)...)
		o := e.owner(e.s)
		cs := e.claimAll(e.s, o, queue, 2)
		var bar core.Barrier
		var fired bool
		held, err := e.s.Fence(e.ctx, cs[0], func(ctx context.Context, f *core.Fenced) error {
			var err error
			if bar, err = f.OpenBarrier(ctx, core.BarrierSpec{Name: "none", Join: core.JoinSpec{Queue: "empty-join"}}); err != nil {
				return err
			}
			fired, err = f.Seal(ctx, bar.ID)
			return err
		})
		if !held || err != nil || !fired {
			e.t.Fatalf("sealing an empty barrier = held %v, %v, fired %v; want fired", held, err, fired)
		}
		if b := e.barrier(bar.ID); b.Expected != 0 || !b.Fired() || e.joinsOf(bar.ID) != 1 {
			e.t.Errorf("empty barrier: expected %d, fired %v, %d joins; want 0, fired, 1", b.Expected, b.Fired(), e.joinsOf(bar.ID))
		}

		r, err := e.s.Expand(e.ctx, cs[1], core.ExpandParams{
			Barrier: core.BarrierSpec{Name: "none", Join: core.JoinSpec{Queue: "empty-join"}},
			Next: func(context.Context, string) (core.ChildPage, error) {
				return core.ChildPage{Done: true}, nil
			},
		})
		if err != nil || !r.Fired || !r.Barrier.Fired() || r.Barrier.Expected != 0 || e.joinsOf(r.Barrier.ID) != 1 {
			e.t.Errorf("Expand with no children = fired %v (barrier fired %v, expected %d), %v; want fired with one join", r.Fired, r.Barrier.Fired(), r.Barrier.Expected, err)
		}
		e.wantCounts("empty-join", map[core.State]int64{core.StateAvailable: 2})
	})
}

// Guarantee 6: in nested fan-ins, a parent that expanded does not arrive at
// the barrier above itself: its join does, so the grandparent's barrier
// fires only after every parent's join completed, and once.
func testFanInNested(e *env) {
	const parents, perParent = 3, 5
	e.enqueueOne(e.s, core.ItemSpec{Queue: "nest-g"})
	o := e.owner(e.s)
	gb := e.fanOut(e.s, e.claimOne(e.s, o, "nest-g"), core.BarrierSpec{Name: "g", Join: core.JoinSpec{Queue: "nest-gjoin"}}, kids("nest-p", "p", parents))
	var pbs []core.Barrier
	for i, pc := range e.claimAll(e.s, o, "nest-p", parents) {
		pbs = append(pbs, e.fanOut(e.s, pc, core.BarrierSpec{Name: "p", Join: core.JoinSpec{Queue: "nest-pjoin"}}, kids("nest-k", fmt.Sprintf("p%d-", i), perParent)))
		if it := e.get(pc.ID); it.State != core.StateCompleted || it.BarrierID != uuid.Nil {
			e.t.Errorf("parent %d after its expansion: %s, barrier %s; want completed, its membership handed to its join", i, it.State, it.BarrierID)
		}
	}
	for i, pb := range pbs {
		if b := e.barrier(pb.ID); b.ParentBarrierID != gb.ID {
			e.t.Errorf("parent %d's barrier reports to %s, want the grandparent's %s", i, b.ParentBarrierID, gb.ID)
		}
	}
	if b := e.barrier(gb.ID); b.Arrived != 0 || b.Failed != 0 || b.Fired() {
		e.t.Fatalf("grandparent barrier after the parents completed: arrived %d, failed %d, fired %v; want 0, 0, not fired", b.Arrived, b.Failed, b.Fired())
	}

	comps := []core.Completion{}
	for _, c := range e.claimAll(e.s, o, "nest-k", parents*perParent) {
		comps = append(comps, core.Completion{Claim: c})
	}
	if lost, err := e.s.CompleteMany(e.ctx, comps); err != nil || len(lost) != 0 {
		e.t.Fatalf("CompleteMany(children) = lost %v, %v", lost, err)
	}
	for i, pb := range pbs {
		b := e.barrier(pb.ID)
		if !b.Fired() || b.Arrived != perParent || e.joinsOf(pb.ID) != 1 {
			e.t.Fatalf("parent %d's barrier: fired %v, arrived %d, %d joins; want fired, %d, 1", i, b.Fired(), b.Arrived, e.joinsOf(pb.ID), perParent)
		}
		if j := e.get(b.JoinItemID); j.BarrierID != gb.ID || j.JoinOf != pb.ID {
			e.t.Errorf("parent %d's join reports to %s (join of %s), want %s (join of %s)", i, j.BarrierID, j.JoinOf, gb.ID, pb.ID)
		}
	}
	if b := e.barrier(gb.ID); b.Arrived != 0 || b.Fired() {
		e.t.Fatalf("grandparent barrier before any parent join ran: arrived %d, fired %v; want 0, not fired", b.Arrived, b.Fired())
	}
	for k := 1; k <= parents; k++ {
		e.complete(e.s, e.claimOne(e.s, o, "nest-pjoin"), "")
		b := e.barrier(gb.ID)
		if b.Arrived != int64(k) || b.Fired() != (k == parents) {
			e.t.Fatalf("after %d of %d parent joins completed: grandparent arrived %d, fired %v; want %d, fired only after the last", k, parents, b.Arrived, b.Fired(), k)
		}
	}
	if n := e.joinsOf(gb.ID); n != 1 {
		e.t.Errorf("%d grandparent joins, want 1", n)
	}
	e.wantCounts("nest-gjoin", map[core.State]int64{core.StateAvailable: 1})

	e.run("TwoBarriersOneParent", func(e *env) {
		// A parent that fans out twice, in fences of their own, stays a
		// member of its barrier, and both joins join it too: it waits for
		// all three.
		e.enqueueOne(e.s, core.ItemSpec{Queue: "two-g"})
		o := e.owner(e.s)
		gb := e.fanOut(e.s, e.claimOne(e.s, o, "two-g"), core.BarrierSpec{Name: "g", Join: core.JoinSpec{Queue: "two-gjoin"}}, kids("two-p", "p", 1))
		pc := e.claimOne(e.s, o, "two-p")
		for _, name := range []string{"first", "second"} {
			held, err := e.s.Fence(e.ctx, pc, func(ctx context.Context, f *core.Fenced) error {
				b, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: name, Join: core.JoinSpec{Queue: "two-pjoin"}})
				if err != nil {
					return err
				}
				if _, err := f.AddChildren(ctx, core.AddChildrenParams{Barrier: b.ID, To: "all", Children: kids("two-k", name, 2)}); err != nil {
					return err
				}
				_, err = f.Seal(ctx, b.ID)
				return err
			})
			if !held || err != nil {
				e.t.Fatalf("fan-out %q: held %v, %v", name, held, err)
			}
		}
		e.complete(e.s, pc, "")
		if b := e.barrier(gb.ID); b.Expected != 3 || b.Arrived != 1 {
			e.t.Fatalf("grandparent barrier after two fan-outs of its child and its completion: expected %d, arrived %d; want 3, 1", b.Expected, b.Arrived)
		}
		for _, c := range e.claimAll(e.s, o, "two-k", 4) {
			e.complete(e.s, c, "")
		}
		for k := 1; k <= 2; k++ {
			e.complete(e.s, e.claimOne(e.s, o, "two-pjoin"), "")
			if b := e.barrier(gb.ID); b.Arrived != int64(k+1) || b.Fired() != (k == 2) {
				e.t.Fatalf("after %d of 2 joins: arrived %d, fired %v; want %d, fired only after both", k, b.Arrived, b.Fired(), k+1)
			}
		}
		if n := e.joinsOf(gb.ID); n != 1 {
			e.t.Errorf("%d grandparent joins, want 1", n)
		}
	})
}

// Guarantee 6: under the FailBarrier policy, one dead child makes the join
// dead, and that dead join counts as a failure at the barrier above.
func testFanInFailBarrier(e *env) {
	e.enqueueOne(e.s, core.ItemSpec{Queue: "fb-g"})
	o := e.owner(e.s)
	gb := e.fanOut(e.s, e.claimOne(e.s, o, "fb-g"), core.BarrierSpec{Name: "g", Join: core.JoinSpec{Queue: "fb-gjoin"}, OnChildFailure: core.FailBarrier}, kids("fb-p", "p", 2))
	pcs := e.claimAll(e.s, o, "fb-p", 2)
	pb0 := e.fanOut(e.s, pcs[0], core.BarrierSpec{Name: "p", Join: core.JoinSpec{Queue: "fb-pjoin"}, OnChildFailure: core.FailBarrier}, kids("fb-k0", "k", 3))
	pb1 := e.fanOut(e.s, pcs[1], core.BarrierSpec{Name: "p", Join: core.JoinSpec{Queue: "fb-pjoin"}, OnChildFailure: core.FailBarrier}, kids("fb-k1", "k", 2))

	k0 := e.claimAll(e.s, o, "fb-k0", 3)
	if dead, err := e.s.Fail(e.ctx, k0[0], core.FailParams{Error: "broken", Discard: true}); err != nil || !dead {
		e.t.Fatalf("Fail(Discard) = %v, %v; want dead", dead, err)
	}
	e.complete(e.s, k0[1], "")
	e.complete(e.s, k0[2], "")
	b0 := e.barrier(pb0.ID)
	if !b0.Fired() || b0.Arrived != 2 || b0.Failed != 1 {
		e.t.Fatalf("failing parent's barrier: fired %v, arrived %d, failed %d; want fired, 2, 1", b0.Fired(), b0.Arrived, b0.Failed)
	}
	if j := e.get(b0.JoinItemID); j.State != core.StateDead || j.JoinOf != pb0.ID || j.LastError == "" {
		e.t.Errorf("failing barrier's join: %s, join of %s, last error %q; want dead with a reason", j.State, j.JoinOf, j.LastError)
	}
	if g := e.barrier(gb.ID); g.Failed != 1 || g.Arrived != 0 || g.Fired() {
		e.t.Fatalf("grandparent barrier after a dead join: arrived %d, failed %d, fired %v; want 0, 1, not fired", g.Arrived, g.Failed, g.Fired())
	}

	for _, c := range e.claimAll(e.s, o, "fb-k1", 2) {
		e.complete(e.s, c, "")
	}
	if b1 := e.barrier(pb1.ID); !b1.Fired() || b1.Failed != 0 {
		e.t.Fatalf("healthy parent's barrier: fired %v, failed %d", b1.Fired(), b1.Failed)
	}
	e.wantCounts("fb-pjoin", map[core.State]int64{core.StateDead: 1, core.StateAvailable: 1})
	e.complete(e.s, e.claimOne(e.s, o, "fb-pjoin"), "")
	g := e.barrier(gb.ID)
	if !g.Fired() || g.Arrived != 1 || g.Failed != 1 || e.joinsOf(gb.ID) != 1 {
		e.t.Fatalf("grandparent barrier: fired %v, arrived %d, failed %d, %d joins; want fired, 1, 1, one join", g.Fired(), g.Arrived, g.Failed, e.joinsOf(gb.ID))
	}
	if j := e.get(g.JoinItemID); j.State != core.StateDead {
		e.t.Errorf("grandparent's join (FailBarrier, one failure below) is %s, want dead", j.State)
	}
}

// Guarantee 6: a join reads its barrier's children and their results by
// keyset pages, in id order, each once.
func testJoinPages(e *env) {
	const n, page = 250, 100
	e.enqueueOne(e.s, core.ItemSpec{Queue: "pages"})
	o := e.owner(e.s)
	b := e.fanOut(e.s, e.claimOne(e.s, o, "pages"), core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "pages-join"}}, kids("pages-k", "k", n))
	var comps []core.Completion
	for _, c := range e.claimAll(e.s, o, "pages-k", n) {
		var p struct{ I int }
		if err := json.Unmarshal(c.Payload, &p); err != nil {
			e.t.Fatalf("payload %s: %v", c.Payload, err)
		}
		comps = append(comps, core.Completion{Claim: c, Result: json.RawMessage(fmt.Sprintf(`{"double":%d}`, 2*p.I))})
	}
	if lost, err := e.s.CompleteMany(e.ctx, comps); err != nil || len(lost) != 0 {
		e.t.Fatalf("CompleteMany = lost %v, %v", lost, err)
	}
	jc := e.claimOne(e.s, o, "pages-join")
	if jc.JoinOf != b.ID {
		e.t.Fatalf("join item is the join of %s, want %s", jc.JoinOf, b.ID)
	}

	var sizes []int
	seen := map[uuid.UUID]bool{}
	last := uuid.Nil
	for {
		items, err := e.s.Children(e.ctx, core.ChildrenParams{Barrier: jc.JoinOf, After: last, Limit: page})
		if err != nil {
			e.t.Fatalf("Children: %v", err)
		}
		if len(items) == 0 {
			break
		}
		sizes = append(sizes, len(items))
		for _, it := range items {
			if idLess(it.ID, last) <= 0 {
				e.t.Errorf("child %s comes after %s: not in id order", it.ID, last)
			}
			if seen[it.ID] {
				e.t.Errorf("child %s returned twice", it.ID)
			}
			seen[it.ID] = true
			last = it.ID
			var p struct{ I int }
			var r struct{ Double *int }
			if json.Unmarshal(it.Payload, &p) != nil || json.Unmarshal(it.Result, &r) != nil || r.Double == nil || *r.Double != 2*p.I || it.State != core.StateCompleted {
				e.t.Errorf("child %s (%s): payload %s, result %s; want completed with double of i", it.ID, it.State, it.Payload, it.Result)
			}
			if !strings.HasPrefix(it.Key, b.ID.String()+"/") {
				e.t.Errorf("child key %q is not scoped by its barrier", it.Key)
			}
		}
		if len(sizes) > n {
			e.t.Fatal("Children keeps returning pages")
		}
	}
	if !slices.Equal(sizes, []int{100, 100, 50}) || len(seen) != n {
		e.t.Errorf("pages of %d: sizes %v, %d distinct children; want [100 100 50], %d", page, sizes, len(seen), n)
	}
	e.complete(e.s, jc, `{"sum":true}`)
}

// Barriers that have not fired are listed oldest first, fired ones never,
// and the age filter reads the database clock.
func testUnfiredBarriers(e *env) {
	const queue = "unfired"
	o := e.owner(e.s)
	e.enqueue(e.s, make2n(queue, 2)...)
	parents := e.claimAll(e.s, o, queue, 4)
	var ids []uuid.UUID // in creation order
	for i, pc := range parents {
		kidsQ := fmt.Sprintf("unfired-kids-%d", i)
		r, err := e.s.Expand(e.ctx, pc, core.ExpandParams{
			Barrier: core.BarrierSpec{Name: "fan", Join: core.JoinSpec{Queue: "unfired-join"}},
			Next: func(context.Context, string) (core.ChildPage, error) {
				return core.ChildPage{Children: kids(kidsQ, "k", 1), Done: true}, nil
			},
		})
		if err != nil || !r.Barrier.Sealed || r.Barrier.Fired() {
			e.t.Fatalf("Expand parent %d: sealed %v, fired %v, %v; want sealed, not fired", i, r.Barrier.Sealed, r.Barrier.Fired(), err)
		}
		ids = append(ids, r.Barrier.ID)
	}
	// The second barrier fires: its one child completes.
	e.complete(e.s, e.claimOne(e.s, o, "unfired-kids-1"), `{"ok":true}`)
	if !e.barrier(ids[1]).Fired() {
		e.t.Fatal("the barrier whose only child completed did not fire")
	}
	want := []uuid.UUID{ids[0], ids[2], ids[3]}

	list := func(s *core.Store, p core.UnfiredBarriersParams) []uuid.UUID {
		e.t.Helper()
		bs, err := s.UnfiredBarriers(e.ctx, p)
		if err != nil {
			e.t.Fatalf("UnfiredBarriers(%+v): %v", p, err)
		}
		out := make([]uuid.UUID, len(bs))
		for i, b := range bs {
			if b.Fired() {
				e.t.Errorf("UnfiredBarriers listed barrier %s, which fired at %v", b.ID, b.FiredAt)
			}
			out[i] = b.ID
		}
		return out
	}
	if got := list(e.s, core.UnfiredBarriersParams{}); !slices.Equal(got, want) {
		e.t.Errorf("UnfiredBarriers = %v, want %v (the unfired ones, oldest first)", got, want)
	}
	if got := list(e.s, core.UnfiredBarriersParams{Limit: 2}); !slices.Equal(got, want[:2]) {
		e.t.Errorf("UnfiredBarriers with limit 2 = %v, want %v", got, want[:2])
	}
	// Minutes old only on a clock an hour ahead.
	if got := list(e.s, core.UnfiredBarriersParams{OlderThan: 30 * time.Minute}); len(got) != 0 {
		e.t.Errorf("UnfiredBarriers older than 30 minutes = %v, want none yet", got)
	}
	if got := list(e.at(time.Hour), core.UnfiredBarriersParams{OlderThan: 30 * time.Minute}); !slices.Equal(got, want) {
		e.t.Errorf("UnfiredBarriers older than 30 minutes, an hour later = %v, want %v", got, want)
	}
	// Once the rest fire, none is left.
	for _, i := range []int{0, 2, 3} {
		e.complete(e.s, e.claimOne(e.s, o, fmt.Sprintf("unfired-kids-%d", i)), `{"ok":true}`)
	}
	if got := list(e.s, core.UnfiredBarriersParams{}); len(got) != 0 {
		e.t.Errorf("UnfiredBarriers after every barrier fired = %v, want none", got)
	}
}
