package workersuite

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/fault"
	"github.com/plenumdb/plenum/internal/testkit/stoptest"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/worker"
)

// The environment that makes the test binary the process a fault kills.
const (
	faultDSNEnv    = "PLENUM_FAULTKILL_DSN"
	faultPrefixEnv = "PLENUM_FAULTKILL_PREFIX"
	faultPointEnv  = "PLENUM_FAULTKILL_POINT"
)

const (
	fkQueue   = "fk"
	fkParents = "fk-parent"
	fkJoins   = "fk-join"
	fkItems   = 6
	fkPages   = 4 // of the dispatch scenario
	fkPerPage = 3
	fkPurged  = 260 // more than one batch of deletes (250 where ids bind as one list)
)

// killScenario is what RunFaultKills does for one injection point: the
// rows set up before the kill, the work of the process killed at the
// point, what the database must hold right after the kill, and the
// recovery whose end state it checks.
type killScenario struct {
	point fault.Point
	// spec is the rule the killed process installs, in fault.Parse's form.
	spec string
	// setup runs in the test process before the killed one starts.
	setup func(k *killEnv)
	// victim runs in the killed process, with the rule installed. It
	// returns only if the point was never hit.
	victim func(k *victimEnv) error
	// killed checks the tables right after the kill.
	killed func(k *killEnv)
	// recover finishes the work in the test process and checks the end.
	recover func(k *killEnv)
}

// killScenarios cover every injection point.
var killScenarios = []killScenario{
	{
		point: fault.AfterClaim, spec: "after-claim=kill",
		setup:  func(k *killEnv) { k.enqueueItems("effect") },
		victim: func(v *victimEnv) error { return v.work() },
		killed: func(k *killEnv) {
			k.wantNoEffects()
			k.wantHeld()
		},
		recover: func(k *killEnv) { k.recoverItems(true) },
	},
	{
		point: fault.FenceBeforeCommit, spec: "fence-before-commit=kill",
		setup:  func(k *killEnv) { k.enqueueItems("effect") },
		victim: func(v *victimEnv) error { return v.work() },
		killed: func(k *killEnv) {
			k.wantNoEffects()
			k.wantHeld()
		},
		recover: func(k *killEnv) { k.recoverItems(true) },
	},
	{
		point: fault.BeforeCompletion, spec: "before-completion=kill",
		setup:  func(k *killEnv) { k.enqueueItems("plain") },
		victim: func(v *victimEnv) error { return v.work() },
		killed: func(k *killEnv) {
			// The handler ran (at-least-once), its completion did not.
			if n := k.effects(); n == 0 {
				k.t.Errorf("after the kill: no handler ran, want at least the one killed before its completion")
			}
			k.wantHeld()
		},
		recover: func(k *killEnv) { k.recoverItems(false) },
	},
	{
		point: fault.CompleteBeforeArrival, spec: "complete-before-arrival=kill",
		setup:  func(k *killEnv) { k.fanOut() },
		victim: func(v *victimEnv) error { return v.work() },
		killed: func(k *killEnv) {
			k.wantHeld()
			if b := k.barrier(); b.Arrived != 0 || b.Fired() {
				k.t.Errorf("after the kill: barrier arrived %d, fired %v; want 0, not fired (the completion rolled back with its count)", b.Arrived, b.Fired())
			}
		},
		recover: func(k *killEnv) { k.recoverFanIn(fkItems) },
	},
	{
		point: fault.FireBeforeJoin, spec: "fire-before-join=kill",
		setup:  func(k *killEnv) { k.fanOut() },
		victim: func(v *victimEnv) error { return v.work() },
		killed: func(k *killEnv) {
			b := k.barrier()
			done := k.counts(fkQueue)[core.StateCompleted]
			if b.Fired() || b.JoinItemID != uuid.Nil || k.joins() != 0 || b.Arrived != done || done >= fkItems {
				k.t.Errorf("after the kill: barrier fired %v, join %s, %d joins, arrived %d with %d children completed; want unfired, no join, arrivals equal to completions, the last batch rolled back",
					b.Fired(), b.JoinItemID, k.joins(), b.Arrived, done)
			}
		},
		recover: func(k *killEnv) { k.recoverFanIn(fkItems) },
	},
	{
		point: fault.DispatchBetweenPages, spec: "dispatch-between-pages=kill+1",
		setup:  func(k *killEnv) { k.enqueue(core.ItemSpec{Queue: fkQueue, Kind: "expand"}) },
		victim: func(v *victimEnv) error { return v.work() },
		killed: func(k *killEnv) {
			b := k.barrier()
			if b.Expected != 2*fkPerPage || b.Cursor != "2" || b.Sealed {
				k.t.Errorf("after the kill: barrier expected %d, cursor %q, sealed %v; want the two pages committed: %d, \"2\", not sealed", b.Expected, b.Cursor, b.Sealed, 2*fkPerPage)
			}
		},
		recover: func(k *killEnv) {
			k.recoverFanIn(fkPages * fkPerPage)
			kids, err := k.store.Children(k.ctx, core.ChildrenParams{Barrier: k.barrier().ID, Limit: 100})
			if err != nil {
				k.t.Fatal(err)
			}
			keys := map[string]bool{}
			for _, kid := range kids {
				keys[kid.Key] = true
			}
			if len(kids) != fkPages*fkPerPage || len(keys) != len(kids) {
				k.t.Errorf("%d children with %d distinct keys, want %d", len(kids), len(keys), fkPages*fkPerPage)
			}
		},
	},
	{
		point: fault.ReapBeforeCrashCount, spec: "reap-before-crash-count=kill",
		setup: func(k *killEnv) {
			k.enqueueItems("plain")
			owner, err := k.store.RegisterOwner(k.ctx, core.RegisterOwnerParams{Host: "gone"})
			if err != nil {
				k.t.Fatal(err)
			}
			cs, err := k.store.Claim(k.ctx, core.ClaimParams{Queue: fkQueue, Owner: owner, Limit: fkItems, Lease: time.Hour})
			if err != nil || len(cs) != fkItems {
				k.t.Fatalf("Claim: %d, %v", len(cs), err)
			}
		},
		victim: func(v *victimEnv) error {
			_, err := v.at(10*time.Minute).Reap(v.ctx, core.ReapParams{StaleAfter: 5 * time.Minute})
			return err
		},
		killed: func(k *killEnv) {
			if c := k.counts(fkQueue); c[core.StateClaimed] != fkItems {
				k.t.Errorf("after the kill: %v, want all %d still claimed", c, fkItems)
			}
			if n := k.crashes(); n != 0 {
				k.t.Errorf("after the kill: %d crashes counted, want 0", n)
			}
			if n := k.sqlCount("SELECT COUNT(*) FROM " + k.names.Attempts); n != 0 {
				k.t.Errorf("after the kill: %d attempts recorded, want 0", n)
			}
		},
		recover: func(k *killEnv) {
			r, err := k.at(10*time.Minute).Reap(k.ctx, core.ReapParams{StaleAfter: 5 * time.Minute})
			if err != nil || r.Crashed != fkItems {
				k.t.Fatalf("Reap after the kill = %+v, %v; want %d crashes", r, err, fkItems)
			}
			if n := k.crashes(); n != fkItems {
				k.t.Errorf("%d crashes counted, want %d, one each", n, fkItems)
			}
			if n := k.sqlCount("SELECT COUNT(*) FROM " + k.names.Attempts + " WHERE outcome = 'crash'"); n != fkItems {
				k.t.Errorf("%d crashes recorded, want %d, one each", n, fkItems)
			}
		},
	},
	{
		point: fault.RetainBetweenBatches, spec: "retain-between-batches=kill",
		setup: func(k *killEnv) { k.finishWithHistory() },
		victim: func(v *victimEnv) error {
			_, err := v.at(2*time.Hour).Purge(v.ctx, core.PurgeParams{OlderThan: time.Hour, Limit: core.MaxClaimLimit})
			return err
		},
		killed: func(k *killEnv) {
			left := k.sqlCount("SELECT COUNT(*) FROM " + k.names.Items)
			if left <= 0 || left >= fkPurged {
				k.t.Errorf("after the kill %d of %d items are left, want one batch deleted", left, fkPurged)
			}
			if h := k.sqlCount("SELECT COUNT(*) FROM " + k.names.Attempts); h != left {
				k.t.Errorf("after the kill %d attempts recorded for %d items, want one each: a batch's history goes with it", h, left)
			}
		},
		recover: func(k *killEnv) {
			r, err := k.at(2*time.Hour).Purge(k.ctx, core.PurgeParams{OlderThan: time.Hour, Limit: core.MaxClaimLimit})
			if err != nil || k.sqlCount("SELECT COUNT(*) FROM "+k.names.Items) != 0 || k.sqlCount("SELECT COUNT(*) FROM "+k.names.Attempts) != 0 {
				k.t.Errorf("Purge after the kill = %+v, %v; want everything left deleted with its history", r, err)
			}
		},
	},
}

// RunFaultKills kills a process with SIGKILL at each injection point of
// the core and the runtime (package internal/fault), one subtest per
// point, and checks that what the point's transaction had written before
// it is gone with it (both halves or neither), that nothing else moved,
// and that recovery in this process (the reaper, a worker, another pass)
// then does the work exactly once: each fenced effect once, each arrival
// counted once, each barrier fired once with one join, each crash counted
// once.
//
// As with RunKilled, t must be a top-level test, which the killed process
// runs again (with -test.run naming it): RunFaultKills must be its first
// call but for building cfg.
func RunFaultKills(t *testing.T, cfg KilledConfig) {
	if cfg.Dialect == nil || cfg.Open == nil || cfg.DSN == nil {
		t.Fatal("workersuite: KilledConfig needs a Dialect, an Open and a DSN")
	}
	if dsn := os.Getenv(faultDSNEnv); dsn != "" {
		err := runVictim(cfg, dsn, os.Getenv(faultPrefixEnv), fault.Point(os.Getenv(faultPointEnv)))
		fmt.Fprintln(os.Stderr, "fault victim: not killed:", err)
		os.Exit(3)
	}
	t.Parallel()
	// One scenario at a time: each starts a process of its own, and the
	// tests of other databases run alongside.
	for _, sc := range killScenarios {
		t.Run(string(sc.point), func(t *testing.T) {
			runKillScenario(t, cfg, sc)
		})
	}
}

// killEnv is one scenario's tables, seen from the test process.
type killEnv struct {
	*env
	dsn   string
	names migrations.Names
	audit string
}

func runKillScenario(t *testing.T, cfg KilledConfig, sc killScenario) {
	dsn := cfg.DSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	t.Cleanup(cancel)
	db, err := cfg.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() }) // after the drops below
	prefix := fmt.Sprintf("pf%08x_", rand.Uint32())
	k := &killEnv{env: &env{t: t, ctx: ctx, db: db, d: cfg.Dialect, prefix: prefix}, dsn: dsn, names: migrations.NamesFor(prefix), audit: prefix + "audit"}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, stmt := range cfg.Dialect.DropTable(k.audit) {
			_, _ = db.ExecContext(cctx, stmt)
		}
		if err := migrations.Drop(cctx, db, cfg.Dialect, prefix); err != nil {
			t.Errorf("drop %s*: %v", prefix, err)
		}
	})
	k.store = k.open(0)
	// No primary key: a second effect for an item must show, not fail.
	if _, err := db.ExecContext(ctx, "CREATE TABLE "+k.audit+" (item VARCHAR(64) NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	sc.setup(k)

	cmd := exec.Command(os.Args[0], "-test.run=^"+strings.Split(t.Name(), "/")[0]+"$")
	cmd.Env = append(os.Environ(), faultDSNEnv+"="+dsn, faultPrefixEnv+"="+prefix, faultPointEnv+"="+string(sc.point))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err = <-exited:
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		<-exited
		t.Fatalf("the process to kill at %s still ran after 3 minutes; stderr:\n%s", sc.point, stderr.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !killedBySIGKILL(exit) || !strings.Contains(stderr.String(), "plenum/fault: kill at "+string(sc.point)) {
		t.Fatalf("the process ended with %v, want SIGKILL at %s; stderr:\n%s", err, sc.point, stderr.String())
	}
	t.Logf("killed at %s: items %v, %d effects", sc.point, k.counts(""), k.effects())
	sc.killed(k)
	if t.Failed() {
		return
	}
	sc.recover(k)
}

// victimEnv is one scenario's tables, seen from the process to kill.
type victimEnv struct {
	ctx    context.Context
	d      dialect.Dialect
	db     *sql.DB
	prefix string
	store  *core.Store
}

// runVictim installs the point's rule and does the scenario's work until
// the rule kills the process; it returns only if it did not.
func runVictim(cfg KilledConfig, dsn, prefix string, point fault.Point) error {
	var sc *killScenario
	for i := range killScenarios {
		if killScenarios[i].point == point {
			sc = &killScenarios[i]
		}
	}
	if sc == nil {
		return fmt.Errorf("no scenario for point %q", point)
	}
	rules, err := fault.Parse(sc.spec)
	if err != nil {
		return err
	}
	fault.Install(rules)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	db, err := cfg.Open(dsn)
	if err != nil {
		return err
	}
	store, err := core.Open(ctx, db, cfg.Dialect, core.Options{Prefix: prefix})
	if err != nil {
		return err
	}
	v := &victimEnv{ctx: ctx, d: cfg.Dialect, db: db, prefix: prefix, store: store}
	if err := sc.victim(v); err != nil {
		return err
	}
	return errors.New("the point was never hit")
}

// at opens a store on the scenario's tables with its clock shifted.
func (v *victimEnv) at(offset time.Duration) *core.Store {
	s, err := core.Open(v.ctx, v.db, v.d, core.Options{Prefix: v.prefix, ClockOffset: offset})
	if err != nil {
		panic(err) // the victim process reports it and exits
	}
	return s
}

// work runs a worker without a reaper until the process is killed.
func (v *victimEnv) work() error {
	w, err := worker.New(v.store, killConfig(v.store, -1))
	if err != nil {
		return err
	}
	registerKillHandlers(w, v.store, v.d, v.prefix+"audit")
	if err := w.Start(v.ctx); err != nil {
		return err
	}
	<-v.ctx.Done()
	return v.ctx.Err()
}

// killConfig is the worker configuration of both processes.
func killConfig(store *core.Store, reap time.Duration) worker.Config {
	return worker.Config{
		Queues:            map[string]worker.QueueConfig{fkQueue: {MaxWorkers: 4}},
		PollInterval:      20 * time.Millisecond,
		HeartbeatInterval: 400 * time.Millisecond,
		StaleAfter:        killedStale(store),
		ReapInterval:      reap,
	}
}

// registerKillHandlers registers the scenarios' kinds: "effect" writes
// its audit row in its fence, "plain" writes it outside any (a run, not
// an effect) and completes through the completion batch, "expand" fans
// out into fkPages pages of "plain" children.
func registerKillHandlers(w *worker.Worker, store *core.Store, d dialect.Dialect, audit string) {
	insert := d.Rebind("INSERT INTO " + audit + " (item) VALUES (?)")
	w.HandleFunc("effect", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		return job.Fence(ctx, func(ctx context.Context, f *core.Fenced) error {
			_, err := f.ExecContext(ctx, insert, job.ID().String())
			return err
		})
	})
	w.HandleFunc("plain", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		_, err := store.DB().ExecContext(ctx, insert, job.ID().String())
		return err
	})
	w.HandleFunc("expand", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		_, err := store.Expand(ctx, job.Claim(), core.ExpandParams{
			Barrier:        core.BarrierSpec{Name: "pages", Join: core.JoinSpec{Queue: fkJoins}},
			Next:           pageOf,
			CompleteParent: true,
		})
		return err
	})
}

// pageOf is the dispatch scenario's source: page i at cursor "i".
func pageOf(_ context.Context, cursor string) (core.ChildPage, error) {
	i := 0
	if cursor != "" {
		var err error
		if i, err = strconv.Atoi(cursor); err != nil {
			return core.ChildPage{}, err
		}
	}
	kids := make([]core.ChildSpec, fkPerPage)
	for j := range kids {
		kids[j] = core.ChildSpec{Key: fmt.Sprintf("p%d-%d", i, j), Queue: fkQueue, Kind: "plain"}
	}
	return core.ChildPage{Children: kids, Next: strconv.Itoa(i + 1), Done: i == fkPages-1}, nil
}

func (k *killEnv) enqueueItems(kind string) {
	specs := make([]core.ItemSpec, fkItems)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: fkQueue, Kind: kind}
	}
	k.enqueue(specs...)
}

// fanOut expands a parent, in this process, into fkItems "plain" children
// of a sealed barrier.
func (k *killEnv) fanOut() {
	k.enqueue(core.ItemSpec{Queue: fkParents})
	owner, err := k.store.RegisterOwner(k.ctx, core.RegisterOwnerParams{Host: "setup"})
	if err != nil {
		k.t.Fatal(err)
	}
	cs, err := k.store.Claim(k.ctx, core.ClaimParams{Queue: fkParents, Owner: owner, Limit: 1, Lease: time.Hour})
	if err != nil || len(cs) != 1 {
		k.t.Fatalf("Claim the parent: %d, %v", len(cs), err)
	}
	kids := make([]core.ChildSpec, fkItems)
	for i := range kids {
		kids[i] = core.ChildSpec{Key: strconv.Itoa(i), Queue: fkQueue, Kind: "plain"}
	}
	_, err = k.store.Expand(k.ctx, cs[0], core.ExpandParams{
		Barrier: core.BarrierSpec{Name: "kids", Join: core.JoinSpec{Queue: fkJoins}},
		Next: func(context.Context, string) (core.ChildPage, error) {
			return core.ChildPage{Children: kids, Next: "end", Done: true}, nil
		},
		CompleteParent: true,
	})
	if err != nil {
		k.t.Fatal(err)
	}
	if err := k.store.Deregister(k.ctx, owner); err != nil {
		k.t.Fatal(err)
	}
}

// finishWithHistory leaves fkPurged completed items, each with a failed
// attempt in its history.
func (k *killEnv) finishWithHistory() {
	specs := make([]core.ItemSpec, fkPurged)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: fkQueue, MaxAttempts: 2}
	}
	k.enqueue(specs...)
	owner, err := k.store.RegisterOwner(k.ctx, core.RegisterOwnerParams{Host: "setup"})
	if err != nil {
		k.t.Fatal(err)
	}
	claim := func(s *core.Store) []core.Claim {
		cs, err := s.Claim(k.ctx, core.ClaimParams{Queue: fkQueue, Owner: owner, Limit: fkPurged, Lease: time.Hour})
		if err != nil || len(cs) != fkPurged {
			k.t.Fatalf("Claim: %d, %v", len(cs), err)
		}
		return cs
	}
	for _, c := range claim(k.store) {
		if _, err := k.store.Fail(k.ctx, c, core.FailParams{Error: "first", RetryIn: time.Millisecond}); err != nil {
			k.t.Fatal(err)
		}
	}
	var done []core.Completion
	for _, c := range claim(k.at(time.Minute)) {
		done = append(done, core.Completion{Claim: c})
	}
	if lost, err := k.store.CompleteMany(k.ctx, done); err != nil || len(lost) != 0 {
		k.t.Fatalf("CompleteMany: lost %v, %v", lost, err)
	}
}

func (k *killEnv) at(offset time.Duration) *core.Store { return k.open(offset) }

func (k *killEnv) counts(queue string) map[core.State]int64 {
	k.t.Helper()
	c, err := k.store.Counts(k.ctx, queue)
	if err != nil {
		k.t.Fatal(err)
	}
	return c
}

func (k *killEnv) sqlCount(q string) int64 {
	k.t.Helper()
	var n int64
	if err := k.db.QueryRowContext(k.ctx, q).Scan(&n); err != nil {
		k.t.Fatalf("%s: %v", q, err)
	}
	return n
}

func (k *killEnv) effects() int64 { return k.sqlCount("SELECT COUNT(*) FROM " + k.audit) }

func (k *killEnv) crashes() int64 {
	return k.sqlCount("SELECT COALESCE(SUM(crash_count), 0) FROM " + k.names.Items)
}

func (k *killEnv) joins() int64 {
	return k.sqlCount("SELECT COUNT(*) FROM " + k.names.Items + " WHERE queue = '" + fkJoins + "'")
}

// barrier returns the scenario's one barrier.
func (k *killEnv) barrier() core.Barrier {
	k.t.Helper()
	var id uuid.UUID
	if err := k.db.QueryRowContext(k.ctx, "SELECT id FROM "+k.names.Barriers).Scan(&id); err != nil {
		k.t.Fatalf("the scenario's barrier: %v", err)
	}
	b, err := k.store.GetBarrier(k.ctx, id)
	if err != nil {
		k.t.Fatal(err)
	}
	return b
}

func (k *killEnv) wantNoEffects() {
	k.t.Helper()
	if n := k.effects(); n != 0 {
		k.t.Errorf("after the kill: %d effects, want 0 (the fence rolled back)", n)
	}
}

// wantHeld checks that the dead process still holds claims and completed
// nothing.
func (k *killEnv) wantHeld() {
	k.t.Helper()
	if c := k.counts(fkQueue); c[core.StateClaimed] == 0 || c[core.StateCompleted] != 0 {
		k.t.Errorf("after the kill: %v, want claims held and nothing completed", c)
	}
}

// recoverWorker runs the scenario's handlers in this process, with a
// reaper, until done holds: a survivor whose clock reads the dead
// process's claims as stale at once (survivorStore).
func (k *killEnv) recoverWorker(what string, done func() bool) {
	k.t.Helper()
	later := survivorStore(k.ctx, k.t, k.store)
	w, err := worker.New(later, killConfig(later, 300*time.Millisecond))
	if err != nil {
		k.t.Fatal(err)
	}
	registerKillHandlers(w, later, k.d, k.audit)
	if err := w.Start(k.ctx); err != nil {
		k.t.Fatal(err)
	}
	defer func() { _ = stoptest.Stop(k.t, w.Stop, 30*time.Second) }()
	for !done() {
		if k.ctx.Err() != nil {
			k.t.Fatalf("recovery did not finish: %s; %v", what, k.counts(""))
		}
		survivorRuns(k.t, w)
		time.Sleep(50 * time.Millisecond)
	}
}

// recoverItems lets a survivor finish the fkItems items: each completes
// once, at attempt 1 (a crash uses none), each with one crash at most;
// with fenced effects, each effect is made once.
func (k *killEnv) recoverItems(fenced bool) {
	held := k.counts(fkQueue)[core.StateClaimed]
	k.recoverWorker("every item completed", func() bool { return k.counts(fkQueue)[core.StateCompleted] == fkItems })
	distinct := k.sqlCount("SELECT COUNT(DISTINCT item) FROM " + k.audit)
	if n := k.effects(); distinct != fkItems || (fenced && n != fkItems) {
		k.t.Errorf("%d effects for %d distinct items, want each item's once", n, distinct)
	}
	if n := k.crashes(); n != held {
		k.t.Errorf("%d crashes counted, want the %d claims the dead process held", n, held)
	}
	if n := k.sqlCount("SELECT COUNT(*) FROM " + k.names.Items + " WHERE attempt <> 1 OR crash_count > 1"); n != 0 {
		k.t.Errorf("%d items finished at an attempt other than 1 or with more than one crash", n)
	}
}

// recoverFanIn lets a survivor finish the children: each arrives once,
// and the barrier fires once, with one join.
func (k *killEnv) recoverFanIn(children int64) {
	k.recoverWorker("every child completed and the barrier fired", func() bool {
		b := k.barrier()
		return b.Fired() && b.Sealed && k.counts(fkQueue)[core.StateCompleted] == children+int64(len(k.expanders()))
	})
	b := k.barrier()
	if b.Expected != children || b.Arrived != children || b.Failed != 0 || k.joins() != 1 {
		k.t.Errorf("barrier expected %d, arrived %d, failed %d, %d joins; want %d, %d, 0, one join", b.Expected, b.Arrived, b.Failed, k.joins(), children, children)
	}
}

// expanders lists the scenario's "expand" items (the dispatch's parent).
func (k *killEnv) expanders() []uuid.UUID {
	rows, err := k.db.QueryContext(k.ctx, "SELECT id FROM "+k.names.Items+" WHERE kind = 'expand'")
	if err != nil {
		k.t.Fatal(err)
	}
	defer rows.Close()
	var out []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			k.t.Fatal(err)
		}
		out = append(out, id)
	}
	return out
}
