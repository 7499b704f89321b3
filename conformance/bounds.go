package conformance

import (
	"context"
	"errors"
	"math"
	"strings"

	"github.com/plenumdb/plenum/core"
)

// Guarantee 8: every integer a caller passes is bounded, at validation, to
// what every database's column holds (32-bit signed for attempts and
// priorities), so that what one database refuses, all refuse: with an
// *core.InputError naming the field, before anything is written. The
// bounds themselves are stored and read back.
func testBadInputIntegers(e *env) {
	const queue = "ints"
	ctx := e.ctx
	e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	o := e.owner(e.s)
	c := e.claimOne(e.s, o, queue)
	items := e.total("")
	huge := 1 << 40
	fence := func(fn func(ctx context.Context, f *core.Fenced) error) error {
		held, err := e.s.Fence(ctx, c, fn)
		if !held {
			return errors.New("fence not held")
		}
		return err
	}
	open := func(opts core.Options) error {
		opts.Prefix = e.prefix
		_, err := core.Open(ctx, e.db, e.d, opts)
		return err
	}
	for _, tc := range []struct {
		name, field string
		err         error
	}{
		{"Enqueue MaxAttempts 2^40", "MaxAttempts", func() error {
			_, err := e.s.Enqueue(ctx, core.ItemSpec{Queue: queue, MaxAttempts: huge})
			return err
		}()},
		{"Enqueue MaxAttempts 2^31", "MaxAttempts", func() error {
			_, err := e.s.Enqueue(ctx, core.ItemSpec{Queue: queue, MaxAttempts: math.MaxInt32 + 1})
			return err
		}()},
		{"Enqueue Priority below -2^30", "Priority", func() error {
			_, err := e.s.Enqueue(ctx, core.ItemSpec{Queue: queue, Priority: -core.MaxPriority - 1})
			return err
		}()},
		{"ChildSpec MaxAttempts 2^40", "MaxAttempts", fence(func(ctx context.Context, f *core.Fenced) error {
			b, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: queue}})
			if err != nil {
				return err
			}
			_, err = f.AddChildren(ctx, core.AddChildrenParams{Barrier: b.ID, Children: []core.ChildSpec{{Key: "k", MaxAttempts: huge}}})
			return err
		})},
		{"JoinSpec MaxAttempts 2^40", "MaxAttempts", fence(func(ctx context.Context, f *core.Fenced) error {
			_, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: queue, MaxAttempts: huge}})
			return err
		})},
		{"JoinSpec Priority 2^40", "Priority", fence(func(ctx context.Context, f *core.Fenced) error {
			_, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: queue, Priority: huge}})
			return err
		})},
		{"Open DefaultMaxAttempts 2^40", "DefaultMaxAttempts", open(core.Options{DefaultMaxAttempts: huge})},
		{"Open DefaultMaxAttempts -1", "DefaultMaxAttempts", open(core.Options{DefaultMaxAttempts: -1})},
		{"Open MaxPayloadBytes -1", "MaxPayloadBytes", open(core.Options{MaxPayloadBytes: -1})},
		{"Reap MaxCrashes 2^40", "MaxCrashes", func() error { _, err := e.s.Reap(ctx, core.ReapParams{MaxCrashes: huge}); return err }()},
	} {
		var ie *core.InputError
		if !errors.As(tc.err, &ie) || !strings.HasSuffix(ie.Field, tc.field) {
			e.t.Errorf("%s = %v, want an *core.InputError naming %s", tc.name, tc.err, tc.field)
		}
	}
	if n := e.total(""); n != items {
		e.t.Errorf("refused input changed the number of items from %d to %d", items, n)
	}
	if n := e.sqlCount("SELECT COUNT(*) FROM {barriers}"); n != 0 {
		e.t.Errorf("refused input left %d barriers", n)
	}

	// The bounds themselves fit every database, items, children and joins
	// alike.
	top := e.get(e.enqueueOne(e.s, core.ItemSpec{Queue: queue + "-top", MaxAttempts: core.MaxAttemptsCeiling, Priority: core.MaxPriority}))
	low := e.get(e.enqueueOne(e.s, core.ItemSpec{Queue: queue + "-top", Priority: -core.MaxPriority}))
	if top.MaxAttempts != core.MaxAttemptsCeiling || top.Priority != core.MaxPriority || low.Priority != -core.MaxPriority {
		e.t.Errorf("items at the bounds read back with MaxAttempts %d, priorities %d and %d", top.MaxAttempts, top.Priority, low.Priority)
	}
	wide := e.open(core.Options{DefaultMaxAttempts: core.MaxAttemptsCeiling})
	if it := e.get(e.enqueueOne(wide, core.ItemSpec{Queue: queue + "-top"})); it.MaxAttempts != core.MaxAttemptsCeiling {
		e.t.Errorf("DefaultMaxAttempts at the bound: item has MaxAttempts %d", it.MaxAttempts)
	}
	b := e.fanOut(e.s, c, core.BarrierSpec{Name: "top", Join: core.JoinSpec{Queue: queue + "-join", MaxAttempts: core.MaxAttemptsCeiling, Priority: -core.MaxPriority}},
		[]core.ChildSpec{{Key: "k", Queue: queue + "-kids", MaxAttempts: core.MaxAttemptsCeiling, Priority: core.MaxPriority}})
	kid := e.claimOne(e.s, o, queue+"-kids")
	if kid.MaxAttempts != core.MaxAttemptsCeiling || kid.Priority != core.MaxPriority {
		e.t.Errorf("child at the bounds: MaxAttempts %d, priority %d", kid.MaxAttempts, kid.Priority)
	}
	e.complete(e.s, kid, "")
	if j := e.get(e.barrier(b.ID).JoinItemID); j.MaxAttempts != core.MaxAttemptsCeiling || j.Priority != -core.MaxPriority {
		e.t.Errorf("join at the bounds: MaxAttempts %d, priority %d", j.MaxAttempts, j.Priority)
	}
}
