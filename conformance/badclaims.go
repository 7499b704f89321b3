package conformance

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/plenumdb/plenum/core"
)

// Guarantee 8, for claims: a claim used after its item was completed, or
// handed to a store on other tables (another table prefix) than the one
// that made it, is refused as lost, with the operation's usual error, and
// changes nothing on either store's tables. Completing again with the
// claim that completed the item succeeds and keeps the first result.
func testBadClaims(e *env) {
	e.run("UsedAfterComplete", func(e *env) {
		const queue = "used"
		id := e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
		c := e.claimOne(e.s, e.owner(e.s), queue)
		e.complete(e.s, c, `{"n":1}`)
		before := e.get(id)
		items := e.total("")
		if err := e.s.Complete(e.ctx, c, []byte(`{"n":2}`)); err != nil {
			e.t.Errorf("Complete again with another result = %v, want nil (already completed by this claim)", err)
		}
		e.refusedAsLost(e.s, c, "after Complete")
		if d := itemDiff(before, e.get(id)); d != "" {
			e.t.Errorf("the used claim changed the item: %s", d)
		}
		if n := e.total(""); n != items {
			e.t.Errorf("the used claim changed the number of items from %d to %d", items, n)
		}
		if n := e.sqlCount("SELECT COUNT(*) FROM {barriers}"); n != 0 {
			e.t.Errorf("the used claim left %d barriers", n)
		}
	})

	e.run("FromAnotherPrefix", func(e *env) {
		const queue = "foreign"
		id := e.enqueueOne(e.s, core.ItemSpec{Queue: queue})
		c := e.claimOne(e.s, e.owner(e.s), queue)
		before := e.get(id)
		other, err := core.Open(e.ctx, e.db, e.d, core.Options{Prefix: e.newPrefix(), Migrate: true})
		if err != nil {
			e.t.Fatalf("core.Open on another prefix: %v", err)
		}
		// The other store holds an item of its own, claimed, which the
		// foreign claim must not reach either.
		own, err := other.Enqueue(e.ctx, core.ItemSpec{Queue: queue})
		if err != nil {
			e.t.Fatal(err)
		}
		owner, err := other.RegisterOwner(e.ctx, core.RegisterOwnerParams{Host: "conformance"})
		if err != nil {
			e.t.Fatal(err)
		}
		if cs, err := other.Claim(e.ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: 1, Lease: time.Hour}); err != nil || len(cs) != 1 {
			e.t.Fatalf("the other store's Claim: %d, %v", len(cs), err)
		}
		ownBefore, err := other.Get(e.ctx, own[0].ID)
		if err != nil {
			e.t.Fatal(err)
		}
		if err := other.Complete(e.ctx, c, nil); !errors.Is(err, core.ErrClaimLost) {
			e.t.Errorf("Complete on another prefix = %v, want ErrClaimLost", err)
		}
		e.refusedAsLost(other, c, "on another prefix")
		if d := itemDiff(before, e.get(id)); d != "" {
			e.t.Errorf("the foreign use changed the item: %s", d)
		}
		if got, err := other.Get(e.ctx, own[0].ID); err != nil || itemDiff(ownBefore, got) != "" {
			e.t.Errorf("the foreign use changed the other store's item: %v %s", err, itemDiff(ownBefore, got))
		}
		if c, err := other.Counts(e.ctx, ""); err != nil || c[core.StateClaimed] != 1 || len(nonZero(c)) != 1 {
			e.t.Errorf("the other store's items after the foreign use: %v, %v; want its one claimed item", c, err)
		}
		if _, err := other.Get(e.ctx, id); !errors.Is(err, core.ErrNotFound) {
			e.t.Errorf("the other store's Get of the foreign item = %v, want ErrNotFound", err)
		}
		// The claim still works where it belongs.
		e.complete(e.s, c, "")
	})
}

// refusedAsLost checks that every fenced operation of s refuses c as lost
// and runs nothing of the caller's.
func (e *env) refusedAsLost(s *core.Store, c core.Claim, where string) {
	e.t.Helper()
	lostErr := func(op string, err error) {
		e.t.Helper()
		if !errors.Is(err, core.ErrClaimLost) {
			e.t.Errorf("%s %s = %v, want ErrClaimLost", op, where, err)
		}
	}
	_, err := s.Fail(e.ctx, c, core.FailParams{Error: "late"})
	lostErr("Fail", err)
	lostErr("Release", s.Release(e.ctx, c, 0))
	lostErr("Extend", s.Extend(e.ctx, c, time.Hour))
	if lost, err := s.ExtendMany(e.ctx, []core.Claim{c}, time.Hour); err != nil || len(lost) != 1 || lost[0] != c.ID {
		e.t.Errorf("ExtendMany %s = lost %v, %v; want the claim lost", where, lost, err)
	}
	ran := false
	if held, err := s.Fence(e.ctx, c, func(context.Context, *core.Fenced) error { ran = true; return nil }); held || err != nil || ran {
		e.t.Errorf("Fence %s = held %v, %v, fn ran %v; want not held, nothing run", where, held, err, ran)
	}
	asked, err := e.expandLate(s, c, "late")
	lostErr("Expand", err)
	if asked {
		e.t.Errorf("Expand %s asked its source for children", where)
	}
}

// expandLate runs an Expand of c through s that should be refused before
// it asks its source, whose barrier joins in queue+"-join" and whose
// children go to queue+"-kids", and reports whether the source was asked.
func (e *env) expandLate(s *core.Store, c core.Claim, queue string) (asked bool, err error) {
	_, err = s.Expand(e.ctx, c, core.ExpandParams{
		Barrier: core.BarrierSpec{Name: "late", Join: core.JoinSpec{Queue: queue + "-join"}},
		Next: func(context.Context, string) (core.ChildPage, error) {
			asked = true
			return core.ChildPage{Children: kids(queue+"-kids", "k", 2), Next: "end", Done: true}, nil
		},
	})
	return asked, err
}

func nonZero(c map[core.State]int64) []string {
	var out []string
	for st, n := range c {
		if n != 0 {
			out = append(out, fmt.Sprintf("%s:%d", st, n))
		}
	}
	return out
}
