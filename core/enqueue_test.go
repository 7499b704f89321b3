package core_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/sqlite"
)

// TestEnqueue_KeyOrderKeepsCallerOrder checks that rows bound in key order
// (for the unique index's lock order) still come back in the caller's
// order, with an existing key reported at its own position, and are claimed
// in the caller's order.
func TestEnqueue_KeyOrderKeepsCallerOrder(t *testing.T) {
	ctx := context.Background()
	o := openStore(t, sqlite.Dialect(), core.Options{})
	s, owner := o.store, o.owner
	first, err := s.Enqueue(ctx, core.ItemSpec{Queue: "q", Kind: "k", Key: "b"})
	if err != nil {
		t.Fatal(err)
	}
	old := first[0]
	specs := []core.ItemSpec{
		{Queue: "q", Kind: "k", Key: "d"},
		{Queue: "q", Kind: "k", Key: "b"},
		{Queue: "q", Kind: "k"},
		{Queue: "q", Kind: "k", Key: "a", Delay: time.Hour},
		{Queue: "q", Kind: "k", Key: "c"},
	}
	got, err := s.Enqueue(ctx, specs...)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(specs) {
		t.Fatalf("%d results for %d specs", len(got), len(specs))
	}
	for i, g := range got {
		if want := i == 1; g.Existed != want {
			t.Errorf("result %d: Existed = %v, want %v", i, g.Existed, want)
		}
	}
	if got[1].ID != old.ID {
		t.Errorf("existing key b: id %v, want the first item's %v", got[1].ID, old.ID)
	}
	cs, err := s.Claim(ctx, core.ClaimParams{Queue: "q", Owner: owner, Limit: 10, Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{old.ID.String(), got[0].ID.String(), got[2].ID.String(), got[4].ID.String()}
	if len(cs) != len(want) {
		t.Fatalf("claimed %d items, want %d (the delayed one waits)", len(cs), len(want))
	}
	for i, c := range cs {
		if c.ID.String() != want[i] {
			t.Errorf("claim %d: %v (key %q), want %v", i, c.ID, c.Key, want[i])
		}
	}
	for i, g := range got {
		it, err := s.Get(ctx, g.ID)
		if err != nil {
			t.Fatalf("result %d: %v", i, err)
		}
		if it.Key != specs[i].Key {
			t.Errorf("result %d: item has key %q, want %q", i, it.Key, specs[i].Key)
		}
	}
}

// TestFail_ErrorTextIsMadeStorable checks that a handler's error text with
// invalid UTF-8, a NUL byte or too many bytes is recorded cleaned, not
// refused.
func TestFail_ErrorTextIsMadeStorable(t *testing.T) {
	ctx := context.Background()
	o := openStore(t, sqlite.Dialect(), core.Options{})
	s, owner := o.store, o.owner
	long := strings.Repeat("é", core.MaxErrorBytes) // two bytes each
	for _, tc := range []struct{ in, want string }{
		{"bad \xff byte", "bad \uFFFD byte"},
		{"nul \x00 byte", "nul \uFFFD byte"},
		{long, long[:core.MaxErrorBytes]},
	} {
		if _, err := s.Enqueue(ctx, core.ItemSpec{Queue: "f", Kind: "k"}); err != nil {
			t.Fatal(err)
		}
		cs, err := s.Claim(ctx, core.ClaimParams{Queue: "f", Owner: owner, Limit: 1, Lease: time.Minute})
		if err != nil || len(cs) != 1 {
			t.Fatalf("claim: %d, %v", len(cs), err)
		}
		if _, err := s.Fail(ctx, cs[0], core.FailParams{Error: tc.in, Discard: true}); err != nil {
			t.Fatalf("fail with %.20q: %v", tc.in, err)
		}
		it, err := s.Get(ctx, cs[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if it.LastError != tc.want {
			t.Errorf("last error %.40q (%d bytes), want %.40q (%d bytes)", it.LastError, len(it.LastError), tc.want, len(tc.want))
		}
	}
}
