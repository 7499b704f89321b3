package crashtest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/flowcheck"
	"github.com/plenumdb/plenum/migrations"
	runtime "github.com/plenumdb/plenum/worker"
)

// The flow crash test: worker processes run keyed items under a
// concurrency limit per key, some of them are killed with SIGKILL while
// they hold claims, the survivors' reaper releases the dead owners'
// claims, and the tables show that the limit held throughout and that
// nothing of it leaked.

// flowWorkerEnv makes the test binary a flow worker; it holds the DSN.
const flowWorkerEnv = "PLENUM_CRASHTEST_FLOW_WORKER"

const (
	flowQueue     = "crashflow"
	flowKind      = "crashflow.item"
	flowKeys      = 50
	flowPerKey    = 4 // items per key in the killed run: more than the limit
	flowLimit     = 3 // the queue's concurrency limit per key
	flowProcs     = 4
	flowSlots     = 12 // handlers per process: more than a key's limit
	flowHold      = 30 * time.Millisecond
	flowStale     = 3 * time.Second
	flowHeartbeat = 250 * time.Millisecond
)

// flowKey names key k of the test.
func flowKey(k int) string { return fmt.Sprintf("key%02d", k) }

// RunFlow proves that a concurrency limit per flow key survives killed
// worker processes: items on flowKeys keys under a limit of flowLimit
// each run in flowProcs worker processes, whose handlers record the start
// and the end of each run through fences (a record exists only if the
// claim held then), and two of the processes are killed while they hold
// claims. At the end every item is completed exactly once, no key ever
// had more than flowLimit claims at once (sampled from the items table
// while it ran, and computed from the audit on the database clock, a
// crashed run lasting until the reaper ended its claim), and a new batch
// on the same keys is claimed up to the limit again: no slot leaked.
//
// Call it from a top-level test function; in the worker processes it
// never returns.
func RunFlow(t *testing.T, cfg Config) {
	if dsn := os.Getenv(flowWorkerEnv); dsn != "" {
		if err := flowWorker(cfg, dsn, os.Getenv(prefixEnv)); err != nil {
			fmt.Fprintln(os.Stderr, "flow crash worker:", err)
			os.Exit(2)
		}
		os.Exit(0)
	}
	if strings.Contains(t.Name(), "/") {
		t.Fatal("crashtest.RunFlow must be called from a top-level test function")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	d := cfg.Dialect
	db, err := cfg.Open(cfg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	prefix := "crflow_" + randomTag() + "_"
	audit := flowAuditTable(prefix)
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, stmt := range d.DropTable(audit.Name) {
			_, _ = db.ExecContext(cctx, stmt)
		}
		if err := migrations.Drop(cctx, db, d, prefix); err != nil {
			t.Errorf("drop the flow crash test's tables: %v", err)
		}
		db.Close()
	})
	store, err := core.Open(ctx, db, d, core.Options{Prefix: prefix, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range d.CreateTable(audit) {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.SetLimit(ctx, core.Limit{Queue: flowQueue, Concurrency: flowLimit}); err != nil {
		t.Fatal(err)
	}
	items := migrations.NamesFor(prefix).Items
	total := flowKeys * flowPerKey

	// Sample the claims per key while the processes run.
	sampled := &flowSampler{max: map[string]int{}}
	sampling, stopSampling := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); sampled.run(sampling, db, d, items) }()
	defer func() { stopSampling(); wg.Wait() }()

	procs := make([]*Process, flowProcs)
	for i := range procs {
		procs[i] = Start(t, t.Name(), flowWorkerEnv+"="+cfg.DSN, prefixEnv+"="+prefix)
	}
	// The work lands once every process runs its worker: enqueued
	// before, the processes that started first (a loaded machine starts
	// some late) could run it all, and the second kill below would wait
	// for runs its process never got.
	for _, p := range procs {
		p.Await(t, 2*time.Minute, "its worker ready", func(line string) bool { return line == "ready" })
	}
	if _, err := store.Enqueue(ctx, flowBatch(flowKind, flowPerKey)...); err != nil {
		t.Fatal(err)
	}
	// Kill two processes while they hold claims: each right after it
	// reports a run started (its handlers hold their items for a while
	// after that), the first early and the second later in the run. Which
	// processes: the first to report that many, not given ones, since
	// the claims share the work unevenly (a process whose heartbeat
	// lagged on a loaded machine is replaced, and its claims go to the
	// others), and a given process could wait for runs it never gets.
	started := followStarted(procs)
	killed := make([]bool, len(procs))
	for _, after := range []int{5, 15} {
		i := awaitStarted(t, started, killed, after, 2*time.Minute)
		procs[i].Kill(t)
		killed[i] = true
		t.Logf("killed worker pid %d after %d runs started", procs[i].Pid(), after)
	}

	// The survivors finish everything once their reaper has released the
	// dead processes' claims.
	waitFor(ctx, t, "every item completed", func() (bool, string) {
		c, err := store.Counts(ctx, flowQueue)
		if err != nil {
			t.Fatal(err)
		}
		return c[core.StateCompleted] == int64(total), fmt.Sprintf("counts %v", c)
	})
	stopSampling()
	wg.Wait()
	for i, p := range procs {
		if !killed[i] {
			p.Kill(t)
		}
	}
	if sampled.err != nil {
		t.Fatalf("sampling the claims per key: %v", sampled.err)
	}
	for _, v := range sampled.over {
		t.Errorf("sampled the items table: %s", v)
	}

	runs, err := readFlowRuns(ctx, db, d, prefix)
	if err != nil {
		t.Fatal(err)
	}
	ends := map[string]int{}
	crashed, unended := 0, 0
	var measured []flowcheck.Run
	for _, r := range runs {
		switch {
		case r.ended:
			ends[r.Item]++
		case r.unended:
			unended++
			continue
		default:
			crashed++
		}
		measured = append(measured, r.Run)
	}
	if len(ends) != total {
		t.Errorf("%d items have an end record, want %d", len(ends), total)
	}
	for item, n := range ends {
		if n != 1 {
			t.Errorf("item %s completed %d times, want once", item, n)
		}
	}
	peak := 0
	for _, o := range flowcheck.Overlaps(measured) {
		peak = max(peak, o.N)
		if o.N > flowLimit {
			t.Errorf("audit: %v, over the limit of %d", o, flowLimit)
		}
	}
	t.Logf("%d runs recorded, %d of them ended by the reaper, %d given back unrecorded (left out); most at once of one key: %d (audit), %d (sampled)",
		len(runs), crashed, unended, peak, sampled.peak())
	if crashed == 0 {
		t.Error("the reaper ended no run: the test killed nothing that held a claim")
	}
	if peak < flowLimit {
		t.Errorf("no key ever ran %d at once (at most %d): the test did not press against the limit", flowLimit, peak)
	}
	if t.Failed() {
		return
	}

	// No slot leaked: a new batch on the same keys is claimed up to the
	// limit of every key, and no further.
	if _, err := store.Enqueue(ctx, flowBatch(flowKind+".again", flowLimit+1)...); err != nil {
		t.Fatal(err)
	}
	owner, err := store.RegisterOwner(ctx, core.RegisterOwnerParams{})
	if err != nil {
		t.Fatal(err)
	}
	claimedAgain := 0
	for range 4 * flowKeys {
		cs, err := store.Claim(ctx, core.ClaimParams{Queue: flowQueue, Owner: owner, Limit: 100, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) == 0 {
			break
		}
		claimedAgain += len(cs)
	}
	perKey, err := claimedPerKey(ctx, db, d, items)
	if err != nil {
		t.Fatal(err)
	}
	for k := range flowKeys {
		if n := perKey[flowKey(k)]; n != flowLimit {
			t.Errorf("after the run, key %s reached %d claims at once, want its limit %d", flowKey(k), n, flowLimit)
		}
	}
	if claimedAgain != flowKeys*flowLimit {
		t.Errorf("the new batch gave %d claims, want %d", claimedAgain, flowKeys*flowLimit)
	}
}

// flowBatch is perKey items of kind on every key of the test.
func flowBatch(kind string, perKey int) []core.ItemSpec {
	var specs []core.ItemSpec
	for i := range perKey {
		for k := range flowKeys {
			specs = append(specs, core.ItemSpec{Queue: flowQueue, Kind: kind, FlowKey: flowKey(k), Priority: i})
		}
	}
	return specs
}

// waitFor polls cond until it holds, failing t with cond's last word when
// ctx ends first.
func waitFor(ctx context.Context, t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, state := cond()
		if ok {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v; %s", what, ctx.Err(), state)
		case <-tick.C:
		}
	}
}

// flowAuditTable is the test's audit (flowcheck.AuditTable).
func flowAuditTable(prefix string) dialect.Table { return flowcheck.AuditTable(prefix + "flow_audit") }

// recordRun writes the audit row of event for c through f.
func recordRun(ctx context.Context, f *core.Fenced, d dialect.Dialect, prefix string, c core.Claim, event string) error {
	return flowcheck.Record(ctx, f, d, flowAuditTable(prefix).Name, migrations.NamesFor(prefix).Items, c, event)
}

// flowWorker runs the worker runtime on the test's queue until it is
// killed: each handler records its start through a fence, holds its item
// for flowHold, and records its end in the fence that completes it. It
// prints "started N" after its Nth start.
func flowWorker(cfg Config, dsn, prefix string) error {
	ctx := context.Background()
	db, err := cfg.Open(dsn)
	if err != nil {
		return err
	}
	store, err := core.Open(ctx, db, cfg.Dialect, core.Options{Prefix: prefix})
	if err != nil {
		return err
	}
	wcfg := runtime.Config{
		Queues:            map[string]runtime.QueueConfig{flowQueue: {MaxWorkers: flowSlots}},
		PollInterval:      50 * time.Millisecond,
		HeartbeatInterval: flowHeartbeat,
		StaleAfter:        flowStale,
		ReapInterval:      300 * time.Millisecond,
		MaxCrashes:        100,
		DefaultKind:       runtime.KindConfig{Timeout: 20 * time.Second},
	}
	runtime.FitPool(store, wcfg)
	var started atomic.Int64
	handle := func(ctx context.Context, job *runtime.Job[json.RawMessage]) error {
		c := job.Claim()
		held, err := store.Fence(ctx, c, func(ctx context.Context, f *core.Fenced) error {
			return recordRun(ctx, f, cfg.Dialect, prefix, c, "start")
		})
		if err != nil || !held {
			return fmt.Errorf("start fence: held=%v err=%v", held, err)
		}
		fmt.Println("started", started.Add(1))
		t := time.NewTimer(flowHold)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
		// The run ends in its end record even when the worker lost its
		// owner meanwhile (it would otherwise give the item back, and
		// the run's end would be recorded nowhere), unless the reaper
		// ended its claim already: then the reaper's record is its end.
		return job.Fence(context.WithoutCancel(ctx), func(ctx context.Context, f *core.Fenced) error {
			return recordRun(ctx, f, cfg.Dialect, prefix, c, "end")
		})
	}
	// A worker that lost its owner (its heartbeats stalled on a loaded
	// machine) is replaced, as a supervisor would.
	for first := true; ; first = false {
		w, err := runtime.New(store, wcfg)
		if err != nil {
			return err
		}
		w.HandleFunc(flowKind, handle)
		if err := w.Start(ctx); err != nil {
			return err
		}
		if first {
			fmt.Println("ready")
		}
		<-w.Done()
		fmt.Fprintln(os.Stderr, "flow crash worker: replacing a worker that stopped:", w.Err())
	}
}

// flowRun is one run of an item as the audit shows it: from its claim to
// its end record or, for a run cut by a kill, to the end of its claim
// (the reaper's record in the item's attempts).
type flowRun struct {
	flowcheck.Run
	ended bool // it has an end record
	// unended: it has no recorded end at all (a worker gave the claim
	// back after failing to write the run's end); it is left out of the
	// overlaps, which it could only overstate if bounded by its item's
	// next run.
	unended bool
}

// readFlowRuns reads the runs the audit under prefix records.
func readFlowRuns(ctx context.Context, db *sql.DB, d dialect.Dialect, prefix string) ([]flowRun, error) {
	n := migrations.NamesFor(prefix)
	byToken := map[string]*flowRun{} // by item and token
	var order []string
	rows, err := db.QueryContext(ctx, "SELECT item, token, event, flow_key, at FROM "+flowAuditTable(prefix).Name)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var item, token, event, key string
		var at any
		if err := rows.Scan(&item, &token, &event, &key, &at); err != nil {
			rows.Close()
			return nil, err
		}
		tm, err := d.ScanTime(at)
		if err != nil {
			rows.Close()
			return nil, err
		}
		// A claim's token is its batch's: a run is an item's under one.
		run := item + " " + token
		r := byToken[run]
		if r == nil {
			r = &flowRun{Run: flowcheck.Run{Item: item, Key: key}}
			byToken[run] = r
			order = append(order, run)
		}
		switch event {
		case "start":
			r.Start = tm
		case "end":
			r.End, r.ended = tm, true
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// The ends of the claims the reaper (or a timeout) ended: the
	// attempts of each item, by time.
	endings := map[string][]time.Time{}
	rows, err = db.QueryContext(ctx, "SELECT a.item_id, a.ended_at FROM "+n.Attempts+" a")
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id, at any
		if err := rows.Scan(&id, &at); err != nil {
			rows.Close()
			return nil, err
		}
		tm, err := d.ScanTime(at)
		if err != nil {
			rows.Close()
			return nil, err
		}
		key, err := scanUUIDString(id)
		if err != nil {
			rows.Close()
			return nil, err
		}
		endings[key] = append(endings[key], tm)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]flowRun, 0, len(order))
	for _, tok := range order {
		r := *byToken[tok]
		if r.Start.IsZero() {
			return nil, fmt.Errorf("run %s has an end record and no start record", tok)
		}
		if !r.ended {
			var ok bool
			r.End, ok = flowcheck.EndOf(r.Start, endings[r.Item])
			r.unended = !ok
		}
		out = append(out, r)
	}
	return out, nil
}

// scanUUIDString reads a UUID column, in any of its drivers' forms, as
// its canonical text.
func scanUUIDString(src any) (string, error) {
	var u uuid.UUID
	if err := u.Scan(src); err != nil {
		return "", err
	}
	return u.String(), nil
}

// followStarted reads each process's output from here on, keeping the
// most runs it has reported started ("started N").
func followStarted(procs []*Process) []*atomic.Int64 {
	out := make([]*atomic.Int64, len(procs))
	for i, p := range procs {
		n := &atomic.Int64{}
		out[i] = n
		go func() {
			for line := range p.lines {
				s, ok := strings.CutPrefix(line, "started ")
				if k, err := strconv.Atoi(s); ok && err == nil && int64(k) > n.Load() {
					n.Store(int64(k))
				}
			}
		}()
	}
	return out
}

// awaitStarted waits until a process not killed has reported at least
// after runs started, and returns the first found; it fails t if none
// has within the time given.
func awaitStarted(t *testing.T, started []*atomic.Int64, killed []bool, after int, within time.Duration) int {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		for i, n := range started {
			if !killed[i] && n.Load() >= int64(after) {
				return i
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no worker process reported %d runs started within %v", after, within)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
