package bench

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/sqlite"
)

// checkFlow checks what --flow reported: every flow row measured in both
// kinds and printed, its ratios to the first two rows, and the fairness
// scenario's pickups, with an empty-queue pickup of pickups items.
func checkFlow(t *testing.T, rep benchReport, out string, pickups int) {
	t.Helper()
	fr := rep.Flow
	if fr == nil {
		t.Fatalf("no flow report; output:\n%s", out)
	}
	if len(fr.Rows) != 7 || fr.Rows[0].Keys != 0 || fr.Rows[4].Keys != flowBindingKeys || fr.Rows[5].Keys != flowFewKeys {
		t.Fatalf("flow rows %+v, want 7: no keys first, %d keys fifth, %d keys sixth", fr.Rows, flowBindingKeys, flowFewKeys)
	}
	few, many := fr.Rows[5], fr.Rows[6]
	if fr.Few != few.Keys || fr.Many != many.Keys || many.Keys <= few.Keys ||
		fr.ManyKeys[0] != many.Claim/few.Claim || fr.ManyKeys[1] != many.Runtime/few.Runtime {
		t.Errorf("many keys over few: %d over %d keys, %v; want the last row's rates over the sixth's", fr.Many, fr.Few, fr.ManyKeys)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	for _, r := range fr.Rows {
		if r.Claim <= 0 || r.Runtime <= 0 || r.Counts.txs <= 0 {
			t.Errorf("flow row %+v has a rate or count of zero", r)
		}
		if !near(r.Off[0], r.Claim/fr.Rows[0].Claim) || !near(r.Off[1], r.Runtime/fr.Rows[0].Runtime) ||
			!near(r.Keyed[0], r.Claim/fr.Rows[1].Claim) || !near(r.Keyed[1], r.Runtime/fr.Rows[1].Runtime) {
			t.Errorf("flow row %q: / off %.3f, / keyed %.3f; want its rates over those of %q and %q", r.Name, r.Off, r.Keyed, fr.Rows[0].Name, fr.Rows[1].Name)
		}
		if strings.Count(out, r.Name) < 3 { // claim+complete, runtime, statements
			t.Errorf("output lacks flow row %q:\n%s", r.Name, out)
		}
	}
	for _, run := range []fairnessRun{fr.Small, fr.FIFO} {
		if run.N != flowSmall || run.P50 <= 0 || run.P50 > run.P99 || run.P99 > run.Max || run.Big <= 0 {
			t.Errorf("fairness run %+v: want %d pickups, 0 < p50 <= p99 <= last", run, flowSmall)
		}
		if run.BigDone < 1 || run.BigDone > run.Big {
			t.Errorf("fairness run %+v: the small key's items came before the first big one completed, or after more than all", run)
		}
	}
	if e := fr.Empty; pickups > 0 && (e == nil || e.N != pickups || e.P50 <= 0 || e.P50 > e.P99) {
		t.Errorf("empty-queue pickup %+v, want %d pickups, 0 < p50 <= p99", e, pickups)
	}
	for _, want := range []string{"flow control, Plenum only", "fairness:", "small key, flow keys", "no flow keys (FIFO)", "/ off", "the number of keys: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// Keyed items come in runs of v.run items per key, key by key, over and
// over.
func TestBench_FlowKeysInRunsKeyByKey(t *testing.T) {
	t.Parallel()
	v := flowVariant{keys: 3, run: 100}
	for _, tc := range []struct {
		i    int
		want string
	}{{0, "k0"}, {99, "k0"}, {100, "k1"}, {299, "k2"}, {300, "k0"}, {450, "k1"}} {
		if got := flowKeyOf(v, tc.i); got != tc.want {
			t.Errorf("item %d: key %q, want %q", tc.i, got, tc.want)
		}
	}
	if got := flowKeyOf(flowVariant{}, 7); got != "" {
		t.Errorf("no keys: key %q, want none", got)
	}
}

// flowEnqueue keys the items as the variant says and gives the queue's
// keys its limit: a claim of them takes at most the limit of each key.
func TestBench_FlowEnqueueSetsTheQueuesLimit(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "flow.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Prefix: "flow_", Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	owner, err := st.RegisterOwner(ctx, core.RegisterOwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		v     flowVariant
		want  map[string]int // claimed per key by one claim of 1,000
		limit core.Limit
	}{
		{"no limit", flowVariant{keys: 2, run: 100}, map[string]int{"k0": 150, "k1": 100}, core.Limit{}},
		{"concurrency", flowVariant{keys: 2, run: 100, limit: core.Limit{Concurrency: flowLimit}}, map[string]int{"k0": flowLimit, "k1": flowLimit}, core.Limit{Concurrency: flowLimit}},
		{"no keys", flowVariant{}, map[string]int{"": 250}, core.Limit{}},
	} {
		queue := "flow." + strings.ReplaceAll(tc.name, " ", "")
		if err := flowEnqueue(ctx, st, queue, 250, tc.v); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		cs, err := st.Claim(ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: 1000, Lease: time.Hour})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got := map[string]int{}
		for _, c := range cs {
			got[c.FlowKey]++
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: claimed %v, want %v", tc.name, got, tc.want)
		}
		for k, n := range tc.want {
			if got[k] != n {
				t.Errorf("%s: claimed %v, want %v", tc.name, got, tc.want)
				break
			}
		}
		limits, err := st.Limits(ctx, queue)
		if err != nil {
			t.Fatal(err)
		}
		tc.limit.Queue = queue
		if tc.limit.Concurrency > 0 && (len(limits) != 1 || limits[0].Concurrency != tc.limit.Concurrency) {
			t.Errorf("%s: limits %+v, want %+v", tc.name, limits, tc.limit)
		}
	}
}
