package core_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/sqlite"
)

// Keys of two items each: a claim of 100 takes the lanes of fifty keys,
// not the handful a claim takes where keys hold much work, once a claim
// has found the lanes short. Without the store learning it, every claim
// came back with 18 items of 9 lanes.
func TestClaim_LanesOfFewItemsFillTheClaim(t *testing.T) {
	o := openStore(t, sqlite.Dialect(), core.Options{})
	const queue, keys, per, n = "small-lanes", 1000, 2, 100
	specs := make([]core.ItemSpec, 0, keys*per)
	for k := range keys {
		for range per {
			specs = append(specs, core.ItemSpec{Queue: queue, FlowKey: fmt.Sprintf("k%04d", k)})
		}
	}
	if _, err := o.store.Enqueue(t.Context(), specs...); err != nil {
		t.Fatal(err)
	}
	var got []int
	total := 0
	for total < keys*per {
		cs, err := o.store.Claim(t.Context(), core.ClaimParams{Queue: queue, Owner: o.owner, Limit: n, Lease: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) == 0 {
			t.Fatalf("after %v: a claim found nothing with %d items left", got, keys*per-total)
		}
		got = append(got, len(cs))
		total += len(cs)
	}
	// The first claim learns; the ones after it are full but for the
	// last.
	for i, k := range got[1 : len(got)-1] {
		if k != n {
			t.Fatalf("claims took %v items: claim %d took %d, want %d", got, i+2, k, n)
		}
	}
}
