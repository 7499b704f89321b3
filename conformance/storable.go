package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/plenumdb/plenum/core"
)

// Guarantee 8: a JSON document one database cannot store is refused on
// all of them, with an *core.InputError naming the field: lone and
// reversed surrogate escapes, and numbers outside the range of
// PostgreSQL's jsonb (numeric: the first digit at most 131,072 places
// before the decimal point, at most 16,383 digits after it). The
// documents at the edges of those rules are stored everywhere.
func testBadInputJSON(e *env) {
	const queue = "json"
	ctx := e.ctx
	o := e.owner(e.s)
	e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	c := e.claimOne(e.s, o, queue)
	items := e.total("")
	refused := []string{
		`"\ud800"`,
		`{"a":"x\udc00"}`,
		`["\udc00\ud800"]`,
		`"\ud800\ud800"`,
		`{"\udbff":1}`,
		`1e1000000`,
		`{"n":-1e1000000}`,
		`[1e-1000000]`,
		`1e131072`,
		`1e-16384`,
		`1.50e-16382`,
		`0.0e-16383`,
		"0." + strings.Repeat("0", 16384),
	}
	fence := func(fn func(ctx context.Context, f *core.Fenced) error) error {
		held, err := e.s.Fence(ctx, c, fn)
		if !held {
			return errors.New("fence not held")
		}
		return err
	}
	for _, doc := range refused {
		raw := []byte(doc)
		for _, tc := range []struct {
			where, field string
			err          error
		}{
			{"Enqueue", "Payload", func() error { _, err := e.s.Enqueue(ctx, core.ItemSpec{Queue: queue, Payload: raw}); return err }()},
			{"Complete", "Result", e.s.Complete(ctx, c, raw)},
			{"Fenced.Complete", "result", fence(func(ctx context.Context, f *core.Fenced) error { return f.Complete(ctx, raw) })},
			{"JoinSpec", "Payload", fence(func(ctx context.Context, f *core.Fenced) error {
				_, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: queue, Payload: raw}})
				return err
			})},
			{"ChildSpec", "Payload", fence(func(ctx context.Context, f *core.Fenced) error {
				b, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: queue}})
				if err != nil {
					return err
				}
				_, err = f.AddChildren(ctx, core.AddChildrenParams{Barrier: b.ID, Children: []core.ChildSpec{{Key: "k", Payload: raw}}})
				return err
			})},
			{"Expand result", "Result", func() error {
				_, err := e.s.Expand(ctx, c, core.ExpandParams{Barrier: core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: queue}},
					Next:   func(context.Context, string) (core.ChildPage, error) { return core.ChildPage{Done: true}, nil },
					Result: raw, CompleteParent: true})
				return err
			}()},
		} {
			var ie *core.InputError
			if !errors.As(tc.err, &ie) || !strings.HasSuffix(ie.Field, tc.field) {
				e.t.Errorf("%s with %.40s = %v, want an *core.InputError naming %s", tc.where, doc, tc.err, tc.field)
			}
		}
	}
	if n := e.total(""); n != items {
		e.t.Errorf("refused documents changed the number of items from %d to %d", items, n)
	}
	if n := e.sqlCount("SELECT COUNT(*) FROM {barriers}"); n != 0 {
		e.t.Errorf("refused documents left %d barriers", n)
	}
	if it := e.get(c.ID); it.State != core.StateClaimed {
		e.t.Errorf("the claimed item is %s after refused results, want claimed", it.State)
	}

	// The edges are stored on every database, and read back.
	for _, doc := range []string{
		`"\ud83d\ude00 \uD83D\uDE00 \ue000"`,
		`"\\ud800 is text"`,
		`1e131071`,
		`-9.9e131071`,
		`1e-16383`,
		`0.1e-16382`,
		`0e-16383`,
		`0e1000000`,
		"0." + strings.Repeat("0", 16383),
	} {
		x, err := e.s.Enqueue(ctx, core.ItemSpec{Queue: queue + "-edge", Payload: []byte(doc)})
		if err != nil {
			e.t.Errorf("Enqueue(%.40s) at the edge of the rules: %v, want it stored", doc, err)
			continue
		}
		if it := e.get(x[0].ID); len(it.Payload) == 0 {
			e.t.Errorf("payload %.40s read back empty", doc)
		}
	}
	e.complete(e.s, c, `["\ud83d\ude00",1e131071]`)
}

// Guarantee 8: every text a caller passes (dispatch cursors, queue names
// in reads, barrier names, hosts) is refused, with an *core.InputError
// naming the field, when some database cannot store it: invalid UTF-8 or
// a NUL byte. A refused page changes nothing, and the fan-out goes on
// past it once its source gives a storable cursor.
func testBadInputText(e *env) {
	const queue, kidsQ = "text", "text-kids"
	ctx := e.ctx
	o := e.owner(e.s)
	e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	c := e.claimOne(e.s, o, queue)
	spec := core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "text-join"}}
	bar := e.openBarrier(c, spec)
	add := func(from, to string) error {
		held, err := e.s.Fence(ctx, c, func(ctx context.Context, f *core.Fenced) error {
			_, err := f.AddChildren(ctx, core.AddChildrenParams{Barrier: bar.ID, From: from, To: to, Children: kids(kidsQ, "k", 2)})
			return err
		})
		if !held {
			return errors.New("fence not held")
		}
		return err
	}
	expand := func(next string) error {
		_, err := e.s.Expand(ctx, c, core.ExpandParams{Barrier: spec, Next: func(_ context.Context, cursor string) (core.ChildPage, error) {
			if cursor != "" { // a cursor taken: stop there
				return core.ChildPage{}, errors.New("source stops")
			}
			return core.ChildPage{Children: kids(kidsQ, "k", 2), Next: next}, nil
		}})
		return err
	}
	for _, bad := range []string{"page\x00two", "page\xff", "\xc3", strings.Repeat("c", core.MaxCursorBytes+1)} {
		for _, tc := range []struct {
			where, field string
			err          error
		}{
			{"AddChildren To", "To", add("", bad)},
			{"AddChildren From", "From", add(bad, "next")},
			{"ChildPage.Next", "Next", expand(bad)},
			{"Counts", "queue", func() error { _, err := e.s.Counts(ctx, bad); return err }()},
			{"OpenBarrier Name", "Name", func() error {
				_, err := e.s.Expand(ctx, c, core.ExpandParams{Barrier: core.BarrierSpec{Name: bad, Join: spec.Join},
					Next: func(context.Context, string) (core.ChildPage, error) { return core.ChildPage{Done: true}, nil }})
				return err
			}()},
			{"RegisterOwner Host", "Host", func() error { _, err := e.s.RegisterOwner(ctx, core.RegisterOwnerParams{Host: bad}); return err }()},
		} {
			var ie *core.InputError
			if !errors.As(tc.err, &ie) || !strings.HasSuffix(ie.Field, tc.field) {
				e.t.Errorf("%s %.20q = %v, want an *core.InputError naming %s", tc.where, bad, tc.err, tc.field)
			}
		}
	}
	if n := e.total(kidsQ); n != 0 {
		e.t.Errorf("refused pages left %d children", n)
	}
	if b := e.barrier(bar.ID); b.Expected != 0 || b.Cursor != "" {
		e.t.Errorf("barrier after refused pages: expected %d, cursor %q; want 0, none", b.Expected, b.Cursor)
	}

	// The fan-out goes on with storable cursors, any text included.
	cursors := []string{"página 2 ✓", "\U0001F600 3", "end"}
	r, err := e.s.Expand(ctx, c, core.ExpandParams{Barrier: spec, CompleteParent: true,
		Next: func(_ context.Context, cursor string) (core.ChildPage, error) {
			i := 0 // the page after cursor
			if cursor != "" {
				i = slices.Index(cursors, cursor) + 1
			}
			return core.ChildPage{Children: kids(kidsQ, fmt.Sprintf("p%d-", i), 2), Next: cursors[i], Done: i == len(cursors)-1}, nil
		}})
	if err != nil || r.Inserted != 6 || !r.Barrier.Sealed || r.Barrier.Cursor != "end" {
		e.t.Fatalf("Expand with text cursors = %v, inserted %d, barrier %+v; want 6 children, sealed at \"end\"", err, r.Inserted, r.Barrier)
	}
}
