package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/stoptest"
	"github.com/plenumdb/plenum/internal/testkit/testdb"
	"github.com/plenumdb/plenum/migrations"
)

// A key whose rate is spent is not polled in a tight loop, nor left to
// the next poll interval: the queue's loop claims again when the key's
// rate allows its next item (core.Store.NextClaimSince, which counts a
// turn that passed since the claim). The poll interval is an hour, so
// that a loop that misses a turn stalls instead of running slower: the
// test waits for the items and fails on a stall of minutes, where the
// rate takes 3 s, and counts the claims (a few per item; a tight loop
// would make thousands).
func TestClaimLoop_RateLimitedKeyClaimedAtItsRate(t *testing.T) {
	t.Parallel()
	for _, dbase := range testdb.All("flowwait.db") {
		t.Run(dbase.Name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			db := dbase.Open(t)
			prefix := fmt.Sprintf("fw%08x_", rand.Uint32())
			t.Cleanup(func() {
				cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := migrations.Drop(cctx, db, dbase.Dialect, prefix); err != nil {
					t.Errorf("drop tables %s*: %v", prefix, err)
				}
			})
			st, err := core.Open(ctx, db, dbase.Dialect, core.Options{Prefix: prefix, Migrate: true})
			if err != nil {
				t.Fatal(err)
			}
			const n, rate, per = 12, 2, 500 * time.Millisecond
			if err := st.SetLimit(ctx, core.Limit{Queue: "q", Key: "k", Rate: rate, Per: per}); err != nil {
				t.Fatal(err)
			}
			specs := make([]core.ItemSpec, n)
			for i := range specs {
				specs[i] = core.ItemSpec{Queue: "q", Kind: "k", FlowKey: "k"}
			}
			if _, err := st.Enqueue(ctx, specs...); err != nil {
				t.Fatal(err)
			}
			w, err := New(st, Config{
				Queues:       map[string]QueueConfig{"q": {MaxWorkers: 4}},
				PollInterval: time.Hour,
				PollOnly:     true,
				ReapInterval: -1,
			})
			if err != nil {
				t.Fatal(err)
			}
			var claims atomic.Int64
			claim := w.claim
			w.claim = func(ctx context.Context, p core.ClaimParams) ([]core.Claim, error) {
				claims.Add(1)
				return claim(ctx, p)
			}
			var ran atomic.Int64
			all := make(chan struct{})
			w.HandleFunc("k", func(context.Context, *Job[json.RawMessage]) error {
				if ran.Add(1) == n {
					close(all)
				}
				return nil
			})
			start := time.Now()
			if err := w.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = stoptest.Stop(t, w.Stop, stopGrace) })
			// One item per Per/Rate after the first (Burst 1): 2.75 s.
			// A missed turn waits out the hour's poll interval; this
			// only bounds the stall that shows it.
			const stalled = 3 * time.Minute
			select {
			case <-all:
			case <-time.After(stalled):
				t.Fatalf("%d of %d items ran at %d per %v, in %d claims, and none for %v: the loop missed a turn of the key's rate and waits for its poll interval", ran.Load(), n, rate, per, claims.Load(), stalled)
			}
			took, made := time.Since(start), claims.Load()
			t.Logf("%d items in %v, %d claims", n, took.Round(time.Millisecond), made)
			// A claim takes each item; one more finds the key's rate
			// spent as the item's slot frees, and now and then one comes
			// a moment early on the database clock.
			if most := int64(4*n + 8); made > most {
				t.Errorf("%d claims for %d rate-limited items in %v, want at most %d: the loop polls the key faster than its rate", made, n, took, most)
			}
		})
	}
}
