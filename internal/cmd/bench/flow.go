package bench

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
)

// The flow-control rows (--flow): Plenum's claim+complete and runtime on
// items with flow keys, with limits on, as ratios to the same run's items
// without flow keys (limits off) and to keyed items with no limit. There
// is no bare-SQL side: the reference is Plenum's own unlimited path.

// Sizes of the flow rows: runs of flowRun items per key, enqueued key by
// key, so that a claim meets keys with more work than their limit; as
// many keys as --items fills, up to flowKeysMax; flowLimit items of a key
// at once; flowBindingKeys keys for the row whose limit binds.
const (
	flowRun         = 100
	flowKeysMax     = 1000
	flowLimit       = 5
	flowBindingKeys = 20
	// flowRate is the non-binding rate limit's rate per second: more
	// claims than any key gets here.
	flowRate = 1_000_000
	// flowTarget is the ratio to limits off the non-binding rows aim at.
	flowTarget = 0.8
	// flowSmall is the small tenant's items in the fairness scenario.
	flowSmall = 100
	// flowFewKeys and flowManyKeys are the keys of the two rows that show
	// the claim's cost flat in the number of keys: the same items, no
	// limits, over few keys and over many (as many as --items allows);
	// flowKeysTarget is the ratio of many to few they aim at.
	flowFewKeys    = 10
	flowManyKeys   = 10_000
	flowKeysTarget = 0.9
)

// flowVariant is one row: how the items are keyed and what limit the
// queue's keys get by default.
type flowVariant struct {
	name string
	// keys is how many flow keys the items are spread over, runs of run
	// items each, key by key, over and over; 0 for no flow keys.
	keys, run int
	limit     core.Limit // the queue's default (Queue set per queue)
	// binds is true when the limit leaves the workers fewer places than
	// they ask for.
	binds bool
	// spread marks the rows of flowFewKeys and flowManyKeys keys.
	spread bool
}

// flowVariants are the rows for o: limits off, keys without limits, a
// concurrency limit and a rate limit that do not bind (at a size that
// gives the keys more places than the workers take), and a concurrency
// limit that does.
func flowVariants(o benchOptions) []flowVariant {
	keys := min(flowKeysMax, (o.Items+flowRun-1)/flowRun)
	demand := o.Workers * o.Batch
	burst := max(1, o.Batch)
	bindRun := min(flowRun, (o.Items+flowBindingKeys-1)/flowBindingKeys)
	slots := func(keys int) string {
		s := cmdline.Commas(int64(keys*flowLimit)) + " places"
		if keys*flowLimit < demand {
			s += ": binds"
		}
		return s
	}
	return []flowVariant{
		{name: "no flow keys (limits off)"},
		{name: fmt.Sprintf("%s, no limits", cmdline.Plural(keys, "key")), keys: keys, run: flowRun},
		{name: fmt.Sprintf("%s, concurrency %d (%s)", cmdline.Plural(keys, "key"), flowLimit, slots(keys)), keys: keys, run: flowRun,
			limit: core.Limit{Concurrency: flowLimit}, binds: keys*flowLimit < demand},
		{name: fmt.Sprintf("%s, rate %s/s, burst %d", cmdline.Plural(keys, "key"), cmdline.Commas(flowRate), burst), keys: keys, run: flowRun,
			limit: core.Limit{Rate: flowRate, Per: time.Second, Burst: burst}},
		{name: fmt.Sprintf("%s, concurrency %d (%s)", cmdline.Plural(flowBindingKeys, "key"), flowLimit, slots(flowBindingKeys)), keys: flowBindingKeys, run: bindRun,
			limit: core.Limit{Concurrency: flowLimit}, binds: flowBindingKeys*flowLimit < demand},
		spread(flowFewKeys),
		spread(min(flowManyKeys, o.Items)),
	}
}

// spread is the row of the items spread evenly over keys keys, without
// limits: one of the two rows (flowFewKeys, flowManyKeys) whose ratio
// shows what the number of keys costs a claim.
func spread(keys int) flowVariant {
	return flowVariant{name: fmt.Sprintf("%s, no limits, items spread evenly", cmdline.Plural(keys, "key")), keys: keys, run: 1, spread: true}
}

// flowRow is one flow row's measurements, over every round.
type flowRow struct {
	Name  string
	Keys  int
	Binds bool
	// Claim and Runtime are the rates, items per second, of
	// claim+complete and of the runtime.
	Claim, Runtime float64
	// Off and Keyed are each rate's ratio to limits off (no flow keys)
	// and to keyed items without limits: [claim, runtime].
	Off, Keyed [2]float64
	// Counts are claim+complete's statements and transactions.
	Counts counts
	Items  int
}

// flowReport is what --flow measured.
type flowReport struct {
	Rows []flowRow
	// Small is the small tenant's pickup latency in the fairness
	// scenario, with flow keys; FIFO the same without them; Empty a keyed
	// item's pickup on an empty queue (nil with --pickups 0).
	Small, FIFO fairnessRun
	Empty       *latencyRow
	// ManyKeys is the rates of the items spread over many keys over
	// those over few (flowManyKeys, flowFewKeys): [claim, runtime].
	ManyKeys [2]float64
	// Few and Many are those rows' numbers of keys.
	Few, Many int
}

// fairnessRun is the small tenant's pickup in one run of the fairness
// scenario: its items' latency from their enqueue to their handlers'
// start, and how much of the big key's backlog was done by the last one.
type fairnessRun struct {
	latencyRow
	Max time.Duration
	// BigDone is the big key's items completed when the small tenant's
	// last item started, of Big.
	BigDone, Big int
}

// flowQueue is the queue of variant v's measurement kind in a round.
func flowQueue(round, v int, kind string) string {
	return fmt.Sprintf("bench.flow.%d.%d.%s", round, v, kind)
}

// flowKeyOf is the key of item i of variant v: runs of v.run items, key by
// key.
func flowKeyOf(v flowVariant, i int) string {
	if v.keys == 0 {
		return ""
	}
	return fmt.Sprintf("k%d", (i/v.run)%v.keys)
}

// flowEnqueue enqueues n items of queue keyed as v says.
func flowEnqueue(ctx context.Context, st *core.Store, queue string, n int, v flowVariant) error {
	if v.limit != (core.Limit{}) {
		l := v.limit
		l.Queue = queue
		if err := st.SetLimit(ctx, l); err != nil {
			return err
		}
	}
	specs := make([]core.ItemSpec, 0, benchChunk)
	for i := 0; i < n; i += benchChunk {
		specs = specs[:0]
		for j := i; j < min(i+benchChunk, n); j++ {
			specs = append(specs, core.ItemSpec{Queue: queue, Kind: "bench", FlowKey: flowKeyOf(v, j), Payload: fmt.Appendf(nil, `{"n":%d}`, j)})
		}
		if _, err := st.Enqueue(ctx, specs...); err != nil {
			return err
		}
	}
	return nil
}

// runFlow measures the flow rows, o.Rounds times each (the variants in
// reverse order in every other round), then the fairness scenario, and
// prints them.
func runFlow(ctx context.Context, w io.Writer, rep *benchReport, sd sides, o benchOptions, settle func() error) error {
	vs := flowVariants(o)
	type acc struct {
		took [2]time.Duration
		c    counts
	}
	accs := make([]acc, len(vs))
	for round := range o.Rounds {
		order := make([]int, len(vs))
		for i := range vs {
			order[i] = i
			if round%2 == 1 {
				order[i] = len(vs) - 1 - i
			}
		}
		for _, i := range order {
			v := vs[i]
			cq, rq := flowQueue(round, i, "claim"), flowQueue(round, i, "runtime")
			if err := flowEnqueue(ctx, sd.st, cq, o.Items, v); err != nil {
				return fmt.Errorf("bench: flow setup (%s): %w", v.name, err)
			}
			if err := flowEnqueue(ctx, sd.st, rq, o.Items, v); err != nil {
				return fmt.Errorf("bench: flow setup (%s): %w", v.name, err)
			}
			if err := settle(); err != nil {
				return fmt.Errorf("bench: checkpoint: %w", err)
			}
			before := sd.counted.snapshot()
			took, err := timedRun(ctx, func(ctx context.Context) error { return flowDrain(ctx, sd.st, cq, o.Items, o) })
			if err != nil {
				return fmt.Errorf("bench: flow claim+complete (%s): %w", v.name, err)
			}
			accs[i].c = accs[i].c.plus(sd.counted.snapshot().since(before))
			accs[i].took[0] += took
			if err := checkSideDrained(ctx, sd, cq, true, o.Items); err != nil {
				return fmt.Errorf("bench: flow claim+complete (%s): %w", v.name, err)
			}
			if err := settle(); err != nil {
				return fmt.Errorf("bench: checkpoint: %w", err)
			}
			took, err = timedRun(ctx, func(ctx context.Context) error { return runtimeDrain(ctx, sd.st, rq, o.Items, o) })
			if err != nil {
				return fmt.Errorf("bench: flow runtime (%s): %w", v.name, err)
			}
			accs[i].took[1] += took
			if err := checkSideDrained(ctx, sd, rq, true, o.Items); err != nil {
				return fmt.Errorf("bench: flow runtime (%s): %w", v.name, err)
			}
		}
	}
	items := o.Rounds * o.Items
	var fr flowReport
	for i, v := range vs {
		fr.Rows = append(fr.Rows, flowRow{Name: v.name, Keys: v.keys, Binds: v.binds, Items: items, Counts: accs[i].c,
			Claim: perSecond(items, accs[i].took[0]), Runtime: perSecond(items, accs[i].took[1])})
	}
	for i := range fr.Rows {
		r := &fr.Rows[i]
		r.Off = [2]float64{r.Claim / fr.Rows[0].Claim, r.Runtime / fr.Rows[0].Runtime}
		r.Keyed = [2]float64{r.Claim / fr.Rows[1].Claim, r.Runtime / fr.Rows[1].Runtime}
	}
	var spreads []flowRow
	for i, v := range vs {
		if v.spread {
			spreads = append(spreads, fr.Rows[i])
		}
	}
	if len(spreads) == 2 {
		few, many := spreads[0], spreads[1]
		fr.Few, fr.Many = few.Keys, many.Keys
		fr.ManyKeys = [2]float64{many.Claim / few.Claim, many.Runtime / few.Runtime}
	}
	printFlow(w, fr, o)

	for _, f := range []struct {
		queue string
		keyed bool
		run   *fairnessRun
	}{{"bench.flow.fair", true, &fr.Small}, {"bench.flow.fifo", false, &fr.FIFO}} {
		var err error
		if *f.run, err = fairness(ctx, sd.st, f.queue, o, f.keyed); err == nil {
			err = checkSideDrained(ctx, sd, f.queue, true, o.Items+flowSmall)
		}
		if err != nil {
			return fmt.Errorf("bench: fairness (%s): %w", f.queue, err)
		}
	}
	if o.Pickups > 0 {
		took, err := pickups(ctx, sd.st, "bench.flow.pickup", o.Pickups, pickupMode{name: "keyed, empty queue", flowKey: "k"})
		if err != nil {
			return fmt.Errorf("bench: pickup latency (keyed): %w", err)
		}
		row := latencyRowOf("keyed, empty queue", took)
		fr.Empty = &row
	}
	printFairness(w, fr, o)
	rep.Flow = &fr
	return nil
}

// printFlow prints the flow rows.
func printFlow(w io.Writer, fr flowReport, o benchOptions) {
	fmt.Fprintf(w, "\nflow control, Plenum only: %s items per row, keys given items in runs of %d key by key; the queue's default limit\n",
		cmdline.Commas(int64(o.Items)), flowRun)
	for k, kind := range []string{"claim+complete", "runtime"} {
		fmt.Fprintf(w, "  %-50s %12s %9s %9s\n", kind, "rate", "/ off", "/ keyed")
		for _, r := range fr.Rows {
			rate := r.Claim
			if k == 1 {
				rate = r.Runtime
			}
			fmt.Fprintf(w, "  %-50s %10s/s %9.2f %9.2f\n", r.Name, cmdline.Commas(int64(rate)), r.Off[k], r.Keyed[k])
		}
	}
	fmt.Fprintf(w, "/ off = the row's rate over the rate without flow keys (limits off); / keyed = over keys without limits; same run\n")
	fmt.Fprintf(w, "the workers take up to %s items at once (%s × %d); target: at least %.1f / off where the limit does not bind\n",
		cmdline.Commas(int64(o.Workers*o.Batch)), cmdline.Plural(o.Workers, "worker"), o.Batch, flowTarget)
	if fr.Many > 0 {
		fmt.Fprintf(w, "the number of keys: %s over %s, the same items spread evenly, no limits: claim+complete %.2f, runtime %.2f; target: at least %.1f\n",
			cmdline.Plural(fr.Many, "key"), cmdline.Plural(fr.Few, "key"), fr.ManyKeys[0], fr.ManyKeys[1], flowKeysTarget)
	}
	for _, r := range fr.Rows {
		fmt.Fprintf(w, "statements per item, flow claim+complete, %s: %s\n", r.Name, perItem(r.Counts, r.Items))
	}
}

// printFairness prints the fairness scenario next to a keyed item's
// pickup on an empty queue.
func printFairness(w io.Writer, fr flowReport, o benchOptions) {
	fmt.Fprintf(w, "\nfairness: %s items of one key enqueued, the runtime working on them, then %d items of a second key in one enqueue;\n",
		cmdline.Commas(int64(o.Items)), flowSmall)
	fmt.Fprintf(w, "pickup latency of the second key's items, enqueue to handler start:\n")
	fmt.Fprintf(w, "  %-34s %10s %10s %10s  %s\n", "", "p50", "p99", "last", "big key's items done by then")
	for _, r := range []struct {
		name string
		run  fairnessRun
	}{{"small key, flow keys", fr.Small}, {"same items, no flow keys (FIFO)", fr.FIFO}} {
		fmt.Fprintf(w, "  %-34s %10s %10s %10s  %s of %s\n", r.name, ms(r.run.P50), ms(r.run.P99), ms(r.run.Max),
			cmdline.Commas(int64(r.run.BigDone)), cmdline.Commas(int64(r.run.Big)))
	}
	if fr.Empty != nil {
		fmt.Fprintf(w, "  %-34s %10s %10s   (%s, one at a time to an idle worker)\n", "keyed item, empty queue", ms(fr.Empty.P50), ms(fr.Empty.P99),
			cmdline.Plural(fr.Empty.N, "item"))
	} else {
		fmt.Fprintf(w, "  (empty-queue pickup not measured: --pickups 0)\n")
	}
}
