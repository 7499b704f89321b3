package core_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/catalog"
	"github.com/plenumdb/plenum/internal/testkit/wiretap"
	"github.com/plenumdb/plenum/sqlite"
)

// TestClaimLanes_ClaimsItemsWhereItFindsThem claims 6 of the 15 items of
// three keys (five each), with no limit, a concurrency limit, a rate
// limit, or attempt limits on the claim, and names the statements the
// claim sent from the catalog. Without a rate limit or attempt limits
// the lanes' items are claimed in the statement that finds them
// (claim.lanes), with no read of candidates first; with either, they are
// read (lanes.candidates) and those chosen claimed (claim.chosen). Each
// key gives two items either way, its oldest, or fewer where its limit
// leaves less room.
func TestClaimLanes_ClaimsItemsWhereItFindsThem(t *testing.T) {
	const rate = "rate"
	for _, c := range []struct {
		name    string
		limit   core.Limit
		kinds   map[string]int
		per     int    // items claimed of each key
		claimed string // the statement that claims the items
	}{
		{name: "no limit", per: 2, claimed: "claim.lanes"},
		{name: "concurrency 1", limit: core.Limit{Concurrency: 1}, per: 1, claimed: "claim.lanes"},
		{name: rate, limit: core.Limit{Rate: 1000, Per: time.Second, Burst: 100}, per: 2, claimed: "claim.chosen"},
		{name: "attempt limits", kinds: map[string]int{"k": 3}, per: 2, claimed: "claim.chosen.max-attempts"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			lt := newLaneTap(t)
			tap, st, cat, owner := &lt.tap, lt.st, lt.cat, lt.owner
			if c.limit != (core.Limit{}) {
				c.limit.Queue = "q"
				if err := st.SetLimit(ctx, c.limit); err != nil {
					t.Fatal(err)
				}
			}
			var first []string // each key's two oldest items
			for i := range 5 {
				var specs []core.ItemSpec
				for k := range 3 {
					specs = append(specs, core.ItemSpec{Queue: "q", Kind: "k", FlowKey: fmt.Sprint("key", k)})
				}
				res, err := st.Enqueue(ctx, specs...)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range res {
					if i < c.per {
						first = append(first, r.ID.String())
					}
				}
			}
			tap.Take()
			claims, err := st.Claim(ctx, core.ClaimParams{Queue: "q", Owner: owner, Limit: 6, Lease: time.Minute, MaxAttempts: c.kinds})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, cl := range claims {
				got = append(got, cl.ID.String())
			}
			slices.Sort(got)
			slices.Sort(first)
			if !slices.Equal(got, first) {
				t.Errorf("claimed %v, want each key's %d oldest: %v", got, c.per, first)
			}
			var names []string
			for _, s := range tap.Take() {
				if m, ok := cat.Match(s.Query); ok {
					names = append(names, m.Name)
				}
			}
			if !slices.Contains(names, c.claimed) {
				t.Errorf("the claim sent %v, with no %s", names, c.claimed)
			}
			read := slices.Contains(names, "lanes.candidates")
			if want := c.claimed != "claim.lanes"; read != want {
				t.Errorf("the claim sent %v: a read of candidates %v, want %v", names, read, want)
			}
			if c.claimed == "claim.lanes" && slices.Contains(names, "claim.chosen") {
				t.Errorf("the claim sent %v: claim.lanes and claim.chosen both", names)
			}
		})
	}
}

// TestClaimLanes_WeightDoesNotStarveALane claims 4 items of two keys
// at a time, one key of weight 5, four times. A claim that begins with
// the heavy key's lane gives it all 4 places in its first round and
// passes over the other lane, which holds work: that lane keeps a turn,
// and the claim does not look at it as a lane that ran out of work (the
// two reads that set a lane idle, lanes.counts and lanes.first, are not
// sent). No two claims in a row pass it over: the lanes give in an order
// turned by one each claim, where in the order of their ids the heavy
// key's lane took every claim.
func TestClaimLanes_WeightDoesNotStarveALane(t *testing.T) {
	ctx := context.Background()
	lt := newLaneTap(t)
	tap, db, st, cat, owner := &lt.tap, lt.db, lt.st, lt.cat, lt.owner
	var specs []core.ItemSpec
	for range 20 {
		specs = append(specs, core.ItemSpec{Queue: "q", Kind: "k", FlowKey: "heavy"}, core.ItemSpec{Queue: "q", Kind: "k", FlowKey: "light"})
	}
	if _, err := st.Enqueue(ctx, specs...); err != nil {
		t.Fatal(err)
	}
	if err := st.SetLimit(ctx, core.Limit{Queue: "q", Key: "heavy", Weight: 5}); err != nil {
		t.Fatal(err)
	}
	passed, heavy, light := 0, 0, 0
	for i := range 4 {
		tap.Take()
		claims, err := st.Claim(ctx, core.ClaimParams{Queue: "q", Owner: owner, Limit: 4, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int{}
		for _, c := range claims {
			got[c.FlowKey]++
		}
		heavy, light = heavy+got["heavy"], light+got["light"]
		if got["light"] > 0 {
			passed = 0
			continue
		}
		if passed++; passed > 1 {
			t.Errorf("claim %d passed over the light key's lane again (%v)", i+1, got)
		}
		for _, s := range tap.Take() {
			if m, ok := cat.Match(s.Query); ok && (m.Name == "lanes.first" || m.Name == "lanes.counts") {
				t.Errorf("claim %d sent %s, looking at the passed-over lane as idle", i+1, m.Name)
			}
		}
		var turn sql.NullInt64
		if err := db.QueryRowContext(ctx, "SELECT next_at FROM lw_lanes WHERE lane_key = 'light'").Scan(&turn); err != nil {
			t.Fatal(err)
		}
		if !turn.Valid {
			t.Errorf("claim %d set the passed-over lane idle", i+1)
		}
	}
	if heavy <= light || light == 0 {
		t.Errorf("four claims took %d of the heavy key, %d of the light: want both, the heavy more", heavy, light)
	}
}

// laneTap is a store on a new SQLite file whose statements tap records,
// the catalog that names them, and a registered owner.
type laneTap struct {
	tap   wiretap.Tap
	db    *sql.DB
	st    *core.Store
	cat   *catalog.Catalog
	owner uuid.UUID
}

func newLaneTap(t *testing.T) *laneTap {
	t.Helper()
	ctx := context.Background()
	lt := &laneTap{}
	lt.db = wiretap.Open(t, &lt.tap, filepath.Join(t.TempDir(), "lanes.db"))
	opts := core.Options{Prefix: "lw_", Migrate: true}
	var err error
	if lt.st, err = core.Open(ctx, lt.db, lanesOnly{sqlite.Dialect()}, opts); err != nil {
		t.Fatal(err)
	}
	if lt.cat, err = catalog.New(sqlite.Dialect(), opts); err != nil {
		t.Fatal(err)
	}
	if lt.owner, err = lt.st.RegisterOwner(ctx, core.RegisterOwnerParams{Host: "test"}); err != nil {
		t.Fatal(err)
	}
	return lt
}
