package core_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/testkit/wiretap"
	"github.com/plenumdb/plenum/sqlite"
)

// TestClaimLanes_WritesEachLaneOnce claims and completes the one item of
// each of four keys (a claim of four takes four lanes), then claims
// again: the second claim takes the four lanes, finds them empty and
// sets them idle. Where the dialect can lock
// rows without writing them (dialect.RowLocker, here SQLite's dialect
// given one as MySQL's has), each claim writes its lanes in one
// statement, at its end, each lane once; without it, the second claim
// writes each lane twice, when it claims it and when it sets it idle.
// Either way every lane ends idle, served at the claim.
func TestClaimLanes_WritesEachLaneOnce(t *testing.T) {
	for _, c := range []struct {
		d      dialect.Dialect
		writes int // statements of the second claim that write the lanes
	}{
		{lanesOnly{lockingSQLite{sqlite.Dialect()}}, 1},
		{lanesOnly{sqlite.Dialect()}, 2},
	} {
		_, locks := dialect.As[dialect.RowLocker](c.d)
		t.Run(fmt.Sprintf("RowLocker=%v", locks), func(t *testing.T) {
			ctx := context.Background()
			var tap wiretap.Tap
			db := wiretap.Open(t, &tap, filepath.Join(t.TempDir(), "lanes.db"))
			st, err := core.Open(ctx, db, c.d, core.Options{Prefix: "lw_", Migrate: true})
			if err != nil {
				t.Fatal(err)
			}
			owner, err := st.RegisterOwner(ctx, core.RegisterOwnerParams{Host: "test"})
			if err != nil {
				t.Fatal(err)
			}
			const keys = 4
			specs := make([]core.ItemSpec, keys)
			for i := range specs {
				specs[i] = core.ItemSpec{Queue: "q", Kind: "k", FlowKey: fmt.Sprint("key", i)}
			}
			if _, err := st.Enqueue(ctx, specs...); err != nil {
				t.Fatal(err)
			}
			for i, want := range []struct{ claimed, writes int }{{keys, 1}, {0, c.writes}} {
				tap.Take() // the enqueue's, then the completions'
				claims, err := st.Claim(ctx, core.ClaimParams{Queue: "q", Owner: owner, Limit: keys, Lease: time.Minute})
				if err != nil || len(claims) != want.claimed {
					t.Fatalf("claim %d = %d claims, %v; want %d", i+1, len(claims), err, want.claimed)
				}
				for _, cl := range claims {
					if err := st.Complete(ctx, cl, nil); err != nil {
						t.Fatal(err)
					}
				}
				var writes []string
				for _, s := range tap.Take() {
					if strings.HasPrefix(s.Query, "UPDATE lw_lanes ") {
						writes = append(writes, s.Query)
					}
				}
				if len(writes) != want.writes {
					t.Errorf("claim %d wrote the lanes in %d statements, want %d:\n%s", i+1, len(writes), want.writes, strings.Join(writes, "\n"))
				}
			}
			var idle, served int
			err = db.QueryRowContext(ctx, "SELECT SUM(CASE WHEN next_at IS NULL THEN 1 ELSE 0 END), COUNT(served_at) FROM lw_lanes").Scan(&idle, &served)
			if err != nil {
				t.Fatal(err)
			}
			if idle != keys || served != keys {
				t.Errorf("after the claims: %d lanes idle and %d served, want all %d both", idle, served, keys)
			}
		})
	}
}

// lanesOnly is d without Capabilities.RecursiveScan: its claims of keyed
// items take lanes whatever their limits, as a claim of limited keys
// does on every database.
type lanesOnly struct{ dialect.Dialect }

func (d lanesOnly) Capabilities() dialect.Capabilities {
	c := d.Dialect.Capabilities()
	c.RecursiveScan = false
	return c
}

func (d lanesOnly) Unwrap() dialect.Dialect { return d.Dialect }

// lockingSQLite is SQLite's dialect with a dialect.RowLocker: a plain
// SELECT locks, since SQLite's write transactions exclude each other.
type lockingSQLite struct{ dialect.Dialect }

func (lockingSQLite) LockRows(spec dialect.ClaimSpec) (string, []any, error) {
	if err := spec.ValidateLock(); err != nil {
		return "", nil, err
	}
	return spec.Locked(" LIMIT "+strconv.Itoa(spec.Limit), ""), spec.FilterArgs, nil
}

// TestLanesReady_OneStatementAQueue enqueues, in one call, keyed items of
// one queue due at once and later, to lanes already open: their turns
// move in one statement, whose keys are locked in key order. Two, one for
// the keys due at once and one for the others, would lock the lanes of a
// queue out of key order, and two such enqueues over crossed keys could
// deadlock.
func TestLanesReady_OneStatementAQueue(t *testing.T) {
	ctx := context.Background()
	var tap wiretap.Tap
	db := wiretap.Open(t, &tap, filepath.Join(t.TempDir(), "ready.db"))
	st, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Prefix: "lr_", Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	spec := func(queue, key string, delay time.Duration) core.ItemSpec {
		return core.ItemSpec{Queue: queue, Kind: "k", FlowKey: key, Delay: delay}
	}
	if _, err := st.Enqueue(ctx, spec("q", "a", 0), spec("q", "b", 0), spec("q", "c", 0), spec("r", "z", 0)); err != nil {
		t.Fatal(err)
	}
	tap.Take()
	if _, err := st.Enqueue(ctx, spec("q", "b", 0), spec("q", "a", time.Hour), spec("q", "c", time.Minute), spec("r", "z", time.Hour)); err != nil {
		t.Fatal(err)
	}
	var writes []string
	for _, s := range tap.Take() {
		if strings.HasPrefix(s.Query, "UPDATE lr_lanes ") {
			writes = append(writes, s.Query)
		}
	}
	if len(writes) != 2 {
		t.Errorf("the enqueue wrote the lanes of two queues in %d statements, want one a queue:\n%s", len(writes), strings.Join(writes, "\n"))
	}
}
