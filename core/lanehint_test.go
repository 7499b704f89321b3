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
// came back with 8 items of 4 lanes.
func TestClaim_LanesOfFewItemsFillTheClaim(t *testing.T) {
	o := openStore(t, sqlite.Dialect(), core.Options{})
	const queue, keys, per, n = "small-lanes", 1000, 2, 100
	enqueueKeyed(t, o.store, queue, keys, per)
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

// Keys that hold much work: a claim of 100 takes four lanes, 25 items of
// each, and leaves the other keys' lanes to the claims beside it, which
// pass over the lanes it holds locked until it commits. With eight or
// nine lanes a claim, ten keys drained by four claimers at half the rate
// of the same items without keys (bench/BENCH.md).
func TestClaim_TakesFourLanesWhereKeysHoldWork(t *testing.T) {
	o := openStore(t, sqlite.Dialect(), core.Options{})
	const queue, keys, per, n = "deep-lanes", 10, 100, 100
	enqueueKeyed(t, o.store, queue, keys, per)
	for claim := 1; claim <= 3; claim++ {
		cs, err := o.store.Claim(t.Context(), core.ClaimParams{Queue: queue, Owner: o.owner, Limit: n, Lease: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		byKey := map[string]int{}
		for _, c := range cs {
			byKey[c.FlowKey]++
		}
		if len(cs) != n || len(byKey) != 4 {
			t.Fatalf("claim %d took %d items of %d keys (%v), want %d of 4", claim, len(cs), len(byKey), byKey, n)
		}
		for key, k := range byKey {
			if k != n/4 {
				t.Errorf("claim %d took %d items of %s, want %d", claim, k, key, n/4)
			}
		}
	}
}

// enqueueKeyed enqueues per items of each of keys flow keys in queue,
// key by key.
func enqueueKeyed(t *testing.T, st *core.Store, queue string, keys, per int) {
	t.Helper()
	specs := make([]core.ItemSpec, 0, keys*per)
	for k := range keys {
		for range per {
			specs = append(specs, core.ItemSpec{Queue: queue, FlowKey: fmt.Sprintf("k%04d", k)})
		}
	}
	if _, err := st.Enqueue(t.Context(), specs...); err != nil {
		t.Fatal(err)
	}
}
