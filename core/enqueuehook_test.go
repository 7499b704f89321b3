package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/sqlite"
)

type hookKey struct{}

// TestOnEnqueue_SeesEveryPathWithTheCallersContext checks that the
// store's enqueue hook is called for the items of every enqueue path
// (Enqueue, EnqueueTx, CreateRun's first items, a fence's Enqueue and
// Then, a barrier's children), with the context of the call, and that
// its entries are stored in the item's metadata beside the caller's,
// the caller's value winning where both set a key.
func TestOnEnqueue_SeesEveryPathWithTheCallersContext(t *testing.T) {
	t.Parallel()
	hook := func(ctx context.Context, e core.Enqueuing) map[string]string {
		v, _ := ctx.Value(hookKey{}).(string)
		if v == "" {
			return nil
		}
		return map[string]string{"from": v, "queue": e.Queue, "mine": "hook's"}
	}
	o := openStore(t, sqlite.Dialect(), core.Options{OnEnqueue: hook})
	s := o.store
	at := func(path string) context.Context { return context.WithValue(t.Context(), hookKey{}, path) }
	ids := map[string]uuid.UUID{}
	caller := map[string]string{"mine": "caller's"}

	res, err := s.Enqueue(at("Enqueue"), core.ItemSpec{Queue: "q", Kind: "parent", Metadata: caller})
	if err != nil {
		t.Fatal(err)
	}
	ids["Enqueue"] = res[0].ID
	tx, err := o.db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err = s.EnqueueTx(at("EnqueueTx"), tx, core.ItemSpec{Queue: "q2", Kind: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	ids["EnqueueTx"] = res[0].ID
	_, first, err := s.CreateRun(at("CreateRun"), core.RunSpec{Name: "r"}, core.ItemSpec{Queue: "q2", Kind: "k"})
	if err != nil {
		t.Fatal(err)
	}
	ids["CreateRun"] = first[0].ID

	cs, err := s.Claim(t.Context(), core.ClaimParams{Queue: "q", Owner: o.owner, Limit: 1, Lease: time.Minute})
	if err != nil || len(cs) != 1 {
		t.Fatalf("claim: %v, %d items", err, len(cs))
	}
	var barrier uuid.UUID
	held, err := s.Fence(at("Fence"), cs[0], func(ctx context.Context, f *core.Fenced) error {
		r, err := f.Enqueue(ctx, core.ItemSpec{Queue: "q2", Kind: "k"})
		if err != nil {
			return err
		}
		ids["Fenced.Enqueue"] = r[0].ID
		b, err := f.OpenBarrier(ctx, core.BarrierSpec{Name: "b", Join: core.JoinSpec{Queue: "q2", Kind: "join"}})
		if err != nil {
			return err
		}
		if _, err := f.AddChildren(ctx, core.AddChildrenParams{Barrier: b.ID, To: "all", Children: []core.ChildSpec{{Key: "c", Queue: "q2", Kind: "k"}}}); err != nil {
			return err
		}
		barrier = b.ID
		if _, err := f.Seal(ctx, b.ID); err != nil {
			return err
		}
		next, err := f.Then(ctx, core.ItemSpec{Queue: "q2", Kind: "next"}, nil)
		ids["Fenced.Then"] = next.ID
		return err
	})
	if err != nil || !held {
		t.Fatalf("fence: held %v, %v", held, err)
	}
	kids, err := s.Children(t.Context(), core.ChildrenParams{Barrier: barrier, Limit: 1})
	if err != nil || len(kids) != 1 {
		t.Fatalf("children: %v, %d", err, len(kids))
	}
	ids["AddChildren"] = kids[0].ID

	want := map[string]string{ // path → the context the hook saw
		"Enqueue": "Enqueue", "EnqueueTx": "EnqueueTx", "CreateRun": "CreateRun",
		"Fenced.Enqueue": "Fence", "AddChildren": "Fence", "Fenced.Then": "Fence",
	}
	all := make([]uuid.UUID, 0, len(ids))
	for _, id := range ids {
		all = append(all, id)
	}
	md, err := s.ItemMetadata(t.Context(), all...)
	if err != nil {
		t.Fatal(err)
	}
	if len(caller) != 1 || caller["mine"] != "caller's" {
		t.Errorf("the caller's metadata became %v: the hook's entries must go to a copy", caller)
	}
	for path, id := range ids {
		it, err := s.Get(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		got := md[id].Values
		mine := "hook's"
		if path == "Enqueue" {
			mine = "caller's"
		}
		if got["from"] != want[path] || got["queue"] != it.Queue || got["mine"] != mine {
			t.Errorf("%s: metadata %v, want from=%s queue=%s mine=%s", path, got, want[path], it.Queue, mine)
		}
	}
}

// TestOnEnqueue_RefusesWhatBreaksTheRules checks that an entry of the
// hook that metadata's rules refuse (a control character in its key)
// fails the enqueue with an *InputError and enqueues nothing.
func TestOnEnqueue_RefusesWhatBreaksTheRules(t *testing.T) {
	t.Parallel()
	o := openStore(t, sqlite.Dialect(), core.Options{OnEnqueue: func(context.Context, core.Enqueuing) map[string]string {
		return map[string]string{"bad\x07key": "v"}
	}})
	_, err := o.store.Enqueue(t.Context(), core.ItemSpec{Queue: "q", Kind: "k"})
	var bad *core.InputError
	if !errors.As(err, &bad) {
		t.Fatalf("Enqueue = %v, want an *InputError", err)
	}
	counts, err := o.store.Counts(t.Context(), "q")
	if err != nil {
		t.Fatal(err)
	}
	if n := counts[core.StateAvailable]; n != 0 {
		t.Errorf("%d items enqueued, want none", n)
	}
}
