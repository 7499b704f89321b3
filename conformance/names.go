package conformance

import (
	"context"
	"errors"
	"time"

	"unicode/utf8"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
)

// unsafeNames are names that would rewrite a terminal (escape sequences,
// bells), break a printed row (newlines, tabs), reorder text on screen
// (bidirectional overrides and isolates) or are not text at all.
var unsafeNames = []string{
	"esc\x1b]0;pwned\x07\x1b[31mRED",
	"nl\nq\tx",
	"cr\rx",
	"del\x7fx",
	"c1\u0085x",
	"c1\u009bx",
	"rlo\u202etxt.exe",
	"lre\u202ax",
	"iso\u2066x\u2069",
	"ls\u2028x",
	"bad\xffutf8",
}

// Guarantee 8, names: every name the store writes (queues, kinds, keys,
// barriers, runs, signals, schedules, halt reasons, owners) refuses
// control characters, bidirectional overrides and isolates, line
// separators and invalid UTF-8 with an *core.InputError naming the
// field, on every database, and nothing is written. Names that only
// select rows (claims, filters, counts, pauses) still take any storable
// name, so that rows stored before the rule stay reachable.
func testNamesRefused(e *env) {
	const queue = "names"
	ctx := e.ctx
	o := e.owner(e.s)
	rc, _, err := e.s.CreateRun(ctx, core.RunSpec{Name: "names-run"}, core.ItemSpec{Queue: queue})
	if err != nil {
		e.t.Fatal(err)
	}
	c := e.claimOne(e.s, o, queue)
	spec := core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "names-join"}}
	bar := e.openBarrier(c, spec)
	items, runs := e.total(""), e.sqlCount("SELECT COUNT(*) FROM "+e.names.Runs)
	fence := func(fn func(ctx context.Context, f *core.Fenced) error) error {
		held, err := e.s.Fence(ctx, c, fn)
		if !held && err == nil {
			return errors.New("fence not held")
		}
		return err
	}
	enq := func(sp core.ItemSpec) error { _, err := e.s.Enqueue(ctx, sp); return err }

	for _, bad := range unsafeNames {
		for _, tc := range []struct {
			where, field string
			err          error
		}{
			{"Enqueue", "specs[0].Queue", enq(core.ItemSpec{Queue: bad})},
			{"Enqueue", "specs[0].Kind", enq(core.ItemSpec{Queue: queue, Kind: bad})},
			{"Enqueue", "specs[0].Key", enq(core.ItemSpec{Queue: queue, Key: bad})},
			{"Enqueue (bulk)", "specs[2].Queue", func() error {
				_, err := e.s.Enqueue(ctx, core.ItemSpec{Queue: queue}, core.ItemSpec{Queue: queue}, core.ItemSpec{Queue: bad})
				return err
			}()},
			{"EnqueueTx", "specs[0].Kind", func() error {
				tx, err := e.s.Begin(ctx)
				if err != nil {
					return err
				}
				defer tx.Rollback()
				_, err = e.s.EnqueueTx(ctx, tx, core.ItemSpec{Queue: queue, Kind: bad})
				return err
			}()},
			{"Fenced.Enqueue", "specs[0].Queue", fence(func(ctx context.Context, f *core.Fenced) error {
				_, err := f.Enqueue(ctx, core.ItemSpec{Queue: bad})
				return err
			})},
			{"Fenced.Then", "specs[0].Key", fence(func(ctx context.Context, f *core.Fenced) error {
				_, err := f.Then(ctx, core.ItemSpec{Queue: queue, Key: bad}, nil)
				return err
			})},
			{"OpenBarrier", "Name", fence(func(ctx context.Context, f *core.Fenced) error {
				_, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: bad, Join: spec.Join})
				return err
			})},
			{"OpenBarrier", "Join.Queue", fence(func(ctx context.Context, f *core.Fenced) error {
				_, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: "b2", Join: core.JoinSpec{Queue: bad}})
				return err
			})},
			{"AddChildren", "Children[1].Key", fence(func(ctx context.Context, f *core.Fenced) error {
				_, err := f.AddChildren(ctx, core.AddChildrenParams{Barrier: bar.ID, To: "x",
					Children: []core.ChildSpec{{Key: "k"}, {Key: bad}}})
				return err
			})},
			{"AddChildren", "Children[0].Kind", fence(func(ctx context.Context, f *core.Fenced) error {
				_, err := f.AddChildren(ctx, core.AddChildrenParams{Barrier: bar.ID, To: "x",
					Children: []core.ChildSpec{{Key: "k", Kind: bad}}})
				return err
			})},
			{"Fenced.Halt", "Reason", fence(func(ctx context.Context, f *core.Fenced) error {
				_, err := f.Halt(ctx, core.HaltParams{Reason: bad})
				return err
			})},
			{"Fenced.Await", "Name", fence(func(ctx context.Context, f *core.Fenced) error {
				_, err := f.Await(ctx, core.AwaitParams{Name: bad})
				return err
			})},
			{"CreateRun", "Name", func() error { _, _, err := e.s.CreateRun(ctx, core.RunSpec{Name: bad}); return err }()},
			{"CreateRun", "Key", func() error { _, _, err := e.s.CreateRun(ctx, core.RunSpec{Name: "r", Key: bad}); return err }()},
			{"CreateRun", "OnHalt.Queue", func() error {
				_, _, err := e.s.CreateRun(ctx, core.RunSpec{Name: "r", OnHalt: &core.HaltItem{Queue: bad}})
				return err
			}()},
			{"CreateRun", "specs[0].Queue", func() error {
				_, _, err := e.s.CreateRun(ctx, core.RunSpec{Name: "r"}, core.ItemSpec{Queue: bad})
				return err
			}()},
			{"Signal", "Name", func() error {
				_, err := e.s.Signal(ctx, core.SignalSpec{Run: rc.ID, Name: bad, Key: "k"})
				return err
			}()},
			{"Signal", "Key", func() error {
				_, err := e.s.Signal(ctx, core.SignalSpec{Run: rc.ID, Name: "s", Key: bad})
				return err
			}()},
			{"UpdateRun", "HaltReason", func() error {
				_, _, err := e.s.UpdateRun(ctx, core.RunUpdate{Run: rc.ID, From: []core.RunState{core.RunRunning}, To: core.RunHalted, HaltReason: bad})
				return err
			}()},
			{"EnqueueDue", "specs[0].Name", func() error {
				_, err := e.s.EnqueueDue(ctx, core.ScheduleSpec{Name: bad, Every: time.Hour, Item: core.ItemSpec{Queue: queue}})
				return err
			}()},
			{"CheckSchedules", "specs[0].Item.Queue", e.s.CheckSchedules(core.ScheduleSpec{Name: "s", Every: time.Hour, Item: core.ItemSpec{Queue: bad}})},
			{"RegisterOwner", "Name", func() error { _, err := e.s.RegisterOwner(ctx, core.RegisterOwnerParams{Name: bad}); return err }()},
			{"RegisterOwner", "Host", func() error { _, err := e.s.RegisterOwner(ctx, core.RegisterOwnerParams{Host: bad}); return err }()},
			{"RegisterOwnerParams.Validate", "Name", core.RegisterOwnerParams{Name: bad}.Validate()},
		} {
			var ie *core.InputError
			if !errors.As(tc.err, &ie) || ie.Field != tc.field {
				e.t.Errorf("%s with %+q = %v, want an *core.InputError naming %s", tc.where, bad, tc.err, tc.field)
			}
		}
	}
	if n := e.total(""); n != items {
		e.t.Errorf("refused names left %d items, want %d", n, items)
	}
	if n := e.sqlCount("SELECT COUNT(*) FROM " + e.names.Runs); n != runs {
		e.t.Errorf("refused names left %d runs, want %d", n, runs)
	}
	if b := e.barrier(bar.ID); b.Expected != 0 || b.Cursor != "" {
		e.t.Errorf("barrier after refused children: expected %d, cursor %q; want 0, none", b.Expected, b.Cursor)
	}
	if r, err := e.s.GetRun(ctx, rc.ID); err != nil || r.State != core.RunRunning {
		e.t.Errorf("run after a refused halt reason = %+v, %v; want running", r, err)
	}

	// Any other text is a name: letters of every script, symbols, spaces,
	// and the bidirectional marks that right-to-left names need.
	for _, good := range []string{"página ✓", "\U0001F600 emoji", "שלום\u200fעולם", "a b", `quote"back\slash`} {
		if _, err := e.s.Enqueue(ctx, core.ItemSpec{Queue: good, Kind: good, Key: good}); err != nil {
			e.t.Errorf("Enqueue with %+q: %v", good, err)
		}
	}
}

// Names stored before the rule (by an older version, or a writer outside
// the store) stay reachable: they can be counted, browsed, claimed,
// paused and resumed, with the very text they hold.
func testNamesStoredBeforeReachable(e *env) {
	ctx := e.ctx
	o := e.owner(e.s)
	for i, bad := range unsafeNames {
		if !utf8.ValidString(bad) {
			continue // no database stores it in a text column
		}
		id := e.enqueueOne(e.s, core.ItemSpec{Queue: "legacy"})
		if err := e.exec(ctx, e.d.Rebind("UPDATE "+e.names.Items+" SET queue = ?, kind = ? WHERE id = ?"), bad, bad, e.d.UUID(id)); err != nil {
			e.t.Fatalf("storing %+q as it was before the rule: %v", bad, err)
		}
		if got := e.get(id); got.Queue != bad || got.Kind != bad {
			e.t.Fatalf("case %d: stored queue %+q, kind %+q; want %+q", i, got.Queue, got.Kind, bad)
		}
		if n := e.total(bad); n != 1 {
			e.t.Errorf("Counts(%+q) total %d, want 1", bad, n)
		}
		page, err := e.items(ctx, browse.ItemFilter{Queue: bad, Kind: bad})
		if err != nil || len(page) != 1 || page[0].ID != id {
			e.t.Errorf("Items(queue and kind %+q) = %d items, %v; want the one", bad, len(page), err)
		}
		sums, err := e.reader().QueueSummaries(ctx, browse.QueueSummaryParams{Queue: bad})
		if err != nil || len(sums) != 1 || sums[0].Queue != bad {
			e.t.Errorf("QueueSummaries(%+q) = %+v, %v; want the queue", bad, sums, err)
		}
		if err := e.s.PauseQueue(ctx, bad); err != nil {
			e.t.Errorf("PauseQueue(%+q): %v", bad, err)
		}
		if err := e.s.ResumeQueue(ctx, bad); err != nil {
			e.t.Errorf("ResumeQueue(%+q): %v", bad, err)
		}
		sub, err := e.s.Subscribe(bad)
		if err != nil {
			e.t.Errorf("Subscribe(%+q): %v", bad, err)
		} else {
			sub.Close()
		}
		cs, err := e.s.Claim(ctx, core.ClaimParams{Queue: bad, Owner: o, Limit: 1, Lease: time.Minute})
		if err != nil || len(cs) != 1 || cs[0].ID != id {
			e.t.Errorf("Claim(%+q) = %d claims, %v; want the item", bad, len(cs), err)
			continue
		}
		e.complete(e.s, cs[0], "")
	}
	// A filter is still checked for what no database stores.
	if _, err := e.items(ctx, browse.ItemFilter{Queue: "q\x00"}); !errors.Is(err, core.ErrInvalidInput) {
		e.t.Errorf("Items(queue with NUL) = %v, want ErrInvalidInput", err)
	}
}
