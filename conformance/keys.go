package conformance

import (
	"context"
	"errors"
	"strings"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// Guarantee 5: children's keys and callers' keys cannot collide. A
// caller's key of the form reserved for children's stored keys (a UUID, a
// slash, anything) is refused by every enqueue path, naming the field; keys
// that merely look alike are taken as usual; and a row that holds a
// child's stored key without being the barrier's child (made outside the
// store) fails the dispatch with ErrKeyConflict instead of being taken
// for the child.
func testFanOutChildKeysReserved(e *env) {
	const queue, kidsQ = "rk", "rk-kids"
	e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
	o := e.owner(e.s)
	pc := e.claimOne(e.s, o, queue)
	spec := core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "rk-join"}}
	bar := e.openBarrier(pc, spec)
	childKey := bar.ID.String() + "/c2"
	wantRefused := func(what string, err error) {
		e.t.Helper()
		var ie *core.InputError
		if !errors.As(err, &ie) || !strings.HasSuffix(ie.Field, "Key") {
			e.t.Errorf("%s with the reserved key form: %v, want an *core.InputError naming the Key field", what, err)
		}
	}
	for _, k := range []string{childKey, strings.ToUpper(bar.ID.String()) + "/c2", uuid.Nil.String() + "/", uuid.NewString() + "/x/y"} {
		_, err := e.s.Enqueue(e.ctx, core.ItemSpec{Queue: kidsQ}, core.ItemSpec{Queue: kidsQ, Key: k})
		wantRefused("Enqueue("+k+")", err)
	}
	tx, err := e.s.Begin(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	_, err = e.s.EnqueueTx(e.ctx, tx, core.ItemSpec{Queue: kidsQ, Key: childKey})
	_ = tx.Rollback()
	wantRefused("EnqueueTx", err)
	other := e.enqueueOne(e.s, core.ItemSpec{Queue: "rk-other"})
	oc := e.claimOne(e.s, o, "rk-other")
	held, err := e.s.Fence(e.ctx, oc, func(ctx context.Context, f *core.Fenced) error {
		_, err := f.Enqueue(ctx, core.ItemSpec{Queue: kidsQ, Key: childKey})
		return err
	})
	if !held {
		e.t.Fatalf("fence on %s not held", other)
	}
	wantRefused("Fenced.Enqueue", err)
	if n := e.total(kidsQ); n != 0 {
		e.t.Fatalf("refused enqueues left %d items in the children's queue", n)
	}
	// Look-alikes are ordinary keys.
	for _, k := range []string{bar.ID.String(), bar.ID.String()[:35] + "/c2", "order/" + bar.ID.String(), bar.ID.String() + "-c2"} {
		if x := e.enqueue(e.s, core.ItemSpec{Queue: kidsQ, Key: k})[0]; x.Existed {
			e.t.Errorf("Enqueue(%s) found an existing item", k)
		}
	}

	// A row with the child's stored key that is not the barrier's child,
	// as only an outside writer can make.
	now := e.d.Now(0)
	planted := uuid.Must(uuid.NewV7())
	if err := e.exec(e.ctx, e.d.Rebind("INSERT INTO "+e.names.Items+
		" (id, queue, kind, unique_key, priority, state, available_at, attempt, max_attempts, crash_count, created_at)"+
		" VALUES (?, ?, 'x', ?, 0, 'available', "+now+", 0, 1, 0, "+now+")"), e.d.UUID(planted), kidsQ, childKey); err != nil {
		e.t.Fatalf("plant a row with a child's key: %v", err)
	}
	before := e.total(kidsQ)
	_, err = e.s.Expand(e.ctx, pc, core.ExpandParams{
		Barrier: spec,
		Next: func(context.Context, string) (core.ChildPage, error) {
			return core.ChildPage{Children: []core.ChildSpec{{Key: "c1", Queue: kidsQ}, {Key: "c2", Queue: kidsQ}}, Next: "end", Done: true}, nil
		},
		CompleteParent: true,
	})
	if !errors.Is(err, core.ErrKeyConflict) {
		e.t.Errorf("Expand over a planted row holding child c2's key = %v, want ErrKeyConflict", err)
	}
	if n := e.total(kidsQ); n != before {
		e.t.Errorf("the refused dispatch changed the children's queue from %d to %d items", before, n)
	}
	if b := e.barrier(bar.ID); b.Expected != 0 || b.Sealed || b.Cursor != "" {
		e.t.Errorf("barrier after the refused dispatch: expected %d, sealed %v, cursor %q; want 0, not sealed, no cursor", b.Expected, b.Sealed, b.Cursor)
	}
	if it := e.get(planted); it.BarrierID != uuid.Nil {
		e.t.Errorf("the planted row joined barrier %s", it.BarrierID)
	}

	// Without the planted row the same dispatch goes through.
	if err := e.exec(e.ctx, e.d.Rebind("DELETE FROM "+e.names.Items+" WHERE id = ?"), e.d.UUID(planted)); err != nil {
		e.t.Fatal(err)
	}
	b := e.fanOut(e.s, pc, spec, []core.ChildSpec{{Key: "c1", Queue: kidsQ}, {Key: "c2", Queue: kidsQ}})
	for _, c := range e.children(b.ID) {
		if want := b.ID.String() + "/"; !strings.HasPrefix(c.Key, want) {
			e.t.Errorf("child stored with key %q, want the prefix %q", c.Key, want)
		}
	}
}
