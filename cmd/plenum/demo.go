package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plenumdb/plenum/internal/cmd/cmdline"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/sqlite"
)

const demoAbout = `
Runs a real fan-out/fan-in workflow on Plenum's runtime on an embedded
SQLite file, and checks Plenum's guarantees while it runs:

  - one parent item expands, page by page, into --children children with
    deterministic keys, behind one barrier;
  - --workers workers of the runtime (package worker: each a registered
    owner with its heartbeat and its reaper) run the children's handler,
    claiming batches sized to their --batch free slots and completing in
    batches;
  - every --fail-every'th child's handler fails its first attempt, and the
    runtime retries it;
  - --crashes workers die holding a batch (they stop heartbeating and never
    complete it); the runtime's reapers find them silent, release their
    claims, and the others finish the work;
  - the barrier fires exactly once, and a join item reads every child's
    result in keyset pages and checks the sum of squares;
  - then a pipeline (package pipeline) on the same runtime expands over
    --orders orders, divides each into price and stock branches and
    combines them, collapses the order lines into totals and writes an
    invoice: every step runs once, and the invoice is checked.

It prints progress every second, then a summary, and exits with status 1
naming the invariant if any did not hold. The database lives in a new
temporary directory, removed afterwards unless --keep (or --db) is given.`

// demoLease is the lease of every claim: the handlers' deadline. It is far above the
// reaper's StaleAfter, so that a dead worker's claims are released as
// crashes (owner gone) and never as timeouts (lease expired).
const demoLease = 30 * time.Second

// demoOptions configure a demo run.
type demoOptions struct {
	DB        string // database file; "" makes one in a new temporary directory
	Keep      bool   // keep the temporary directory
	Prefix    string
	Children  int
	Workers   int
	Batch     int
	Page      int // children per dispatch transaction
	Crashes   int // workers that die holding a batch
	FailEvery int // every FailEvery'th child fails once; 0: none
	Orders    int // orders of the pipeline part; 0: no pipeline
	// StaleAfter is the reaper's threshold; Heartbeat the owners' interval.
	StaleAfter time.Duration
	Heartbeat  time.Duration
	Progress   time.Duration // interval of progress lines; 0: none
	Timeout    time.Duration // the run fails if it has not finished by then
}

func defaultDemoOptions() demoOptions {
	return demoOptions{
		Prefix:    migrations.DefaultPrefix,
		Children:  10000,
		Orders:    100,
		Workers:   8,
		Batch:     50,
		Page:      500,
		Crashes:   1,
		FailEvery: 50,
		// The shortest StaleAfter Reap accepts. A second store with a
		// ClockOffset could reap sooner, but it would also take live
		// owners for dead unless they heartbeat far more often: two
		// seconds is the honest price of a real crash.
		StaleAfter: 2 * core.MinLease,
		Heartbeat:  200 * time.Millisecond,
		Progress:   time.Second,
		Timeout:    5 * time.Minute,
	}
}

func (o demoOptions) validate() error {
	switch {
	case o.Children < 1 || o.Children > 10_000_000:
		return cmdline.Usagef("--children %d: want 1 to 10,000,000", o.Children)
	case o.Workers < 1 || o.Workers > 256:
		return cmdline.Usagef("--workers %d: want 1 to 256", o.Workers)
	case o.Batch < 1 || o.Batch > core.MaxClaimLimit:
		return cmdline.Usagef("--batch %d: want 1 to %d", o.Batch, core.MaxClaimLimit)
	case o.Page < 1 || o.Page > 10000:
		return cmdline.Usagef("--page %d: want 1 to 10,000", o.Page)
	case o.Crashes < 0 || o.Crashes > o.Workers:
		return cmdline.Usagef("--crashes %d: want 0 to --workers (%d)", o.Crashes, o.Workers)
	case o.Crashes >= o.Children:
		return cmdline.Usagef("--crashes %d: each crash abandons at least one child, so want fewer than --children (%d)", o.Crashes, o.Children)
	case o.Orders < 0 || o.Orders > 100_000:
		return cmdline.Usagef("--orders %d: want 0 (no pipeline) to 100,000", o.Orders)
	case o.FailEvery < 0:
		return cmdline.Usagef("--fail-every %d: want 0 (no failures) or more", o.FailEvery)
	case o.StaleAfter < 2*core.MinLease || o.StaleAfter >= demoLease:
		return cmdline.Usagef("stale-after %v: want %v to %v", o.StaleAfter, 2*core.MinLease, demoLease)
	case o.Heartbeat <= 0 || o.Heartbeat > o.StaleAfter/4:
		return cmdline.Usagef("heartbeat %v: want more than 0 and at most a quarter of stale-after (%v)", o.Heartbeat, o.StaleAfter)
	case o.Progress < 0:
		return cmdline.Usagef("progress interval %v is negative", o.Progress)
	case o.Timeout <= 0:
		return cmdline.Usagef("--timeout %v: want a positive duration", o.Timeout)
	}
	return checkPrefix(o.Prefix)
}

func runDemoCmd(ctx context.Context, e env, args []string) error {
	o := defaultDemoOptions()
	fs := newFlags(e, "demo", "demo [flags]", demoAbout)
	fs.StringVar(&o.DB, "db", "", "SQLite database `file` to use (default: one in a new temporary directory)")
	fs.BoolVar(&o.Keep, "keep", false, "keep the temporary directory and its database afterwards")
	fs.StringVar(&o.Prefix, "prefix", o.Prefix, "table name prefix")
	fs.IntVar(&o.Children, "children", o.Children, "children the parent expands into")
	fs.IntVar(&o.Workers, "workers", o.Workers, "concurrent workers")
	fs.IntVar(&o.Batch, "batch", o.Batch, "children claimed and completed per batch")
	fs.IntVar(&o.Page, "page", o.Page, "children inserted per dispatch transaction")
	fs.IntVar(&o.Crashes, "crashes", o.Crashes, "workers that die holding a batch")
	fs.IntVar(&o.FailEvery, "fail-every", o.FailEvery, "every `n`th child fails its first attempt (0: none)")
	fs.IntVar(&o.Orders, "orders", o.Orders, "orders the pipeline expands over (0: no pipeline)")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "fail if the workflow has not finished by then")
	if err := cmdline.ParseFlags(fs, args); err != nil {
		return err
	}
	_, err := runDemo(ctx, e.stdout, o)
	return err
}

// idleGap is the longest pause between two completions that still counts
// as working time.
const idleGap = 100 * time.Millisecond

// demoRun is the shared state of one run's goroutines.
type demoRun struct {
	o     demoOptions
	st    *core.Store
	out   io.Writer
	start time.Time

	parentQ, childQ, joinQ string

	cancel  context.CancelFunc
	errOnce sync.Once
	err     error

	victimsDone chan struct{}
	victimsLeft atomic.Int64

	completed, claims, claimed, retries, lost, deadFails atomic.Int64
	crashes, abandoned, ownersLost                       atomic.Int64
	crashed, timedOut, deadLettered, ownersRemoved       atomic.Int64

	// lastDone is when the latest completion committed (UnixNano); idle
	// sums the gaps between completions longer than idleGap, which is
	// mostly the wait for the reaper to find a dead worker.
	lastDone, idle atomic.Int64

	mu      sync.Mutex
	tokens  map[uuid.UUID]bool // claim batches of the children's workers
	barrier uuid.UUID
	join    joinCheck
	joined  bool
}

// newDemoRun returns the state of a run that has not started.
func newDemoRun(o demoOptions, st *core.Store, out io.Writer) *demoRun {
	r := &demoRun{o: o, st: st, out: out, parentQ: "demo.parent", childQ: "demo.square", joinQ: "demo.join",
		victimsDone: make(chan struct{}), tokens: map[uuid.UUID]bool{}}
	r.victimsLeft.Store(int64(o.Crashes))
	if o.Crashes == 0 {
		close(r.victimsDone)
	}
	return r
}

// runDemo runs the demo with o, writing progress and the summary to w. It
// returns an error naming the invariants that failed, if any did.
func runDemo(ctx context.Context, w io.Writer, o demoOptions) (demoReport, error) {
	if err := o.validate(); err != nil {
		return demoReport{}, err
	}
	db, path, closeDB, err := openScratch("demo", o.DB, o.Keep)
	if err != nil {
		return demoReport{}, err
	}
	defer closeDB()
	st, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Prefix: o.Prefix, Migrate: true})
	if err == nil {
		err = checkEmpty(ctx, st)
	}
	switch {
	case err != nil && ctx.Err() != nil:
		// ^C (or the caller's deadline) while the tables were being made:
		// an interruption, as it is later in the run.
		return demoReport{}, fmt.Errorf("demo: interrupted while setting up %s: %w", path, err)
	case err != nil && st == nil:
		return demoReport{}, fmt.Errorf("demo: %w", err)
	case err != nil:
		return demoReport{}, fmt.Errorf("demo: %s: %w", path, err)
	}

	out := &syncWriter{w: w}
	fmt.Fprintf(out, "Plenum demo on SQLite: %s\n", path)
	fmt.Fprintf(out, "1 parent -> %s children -> 1 join; %s, batches of %d, %s, every %s fails once\n\n",
		cmdline.Commas(o.Children), cmdline.Plural(o.Workers, "worker"), o.Batch, crashPhrase(o.Crashes), ordinal(o.FailEvery))

	r := newDemoRun(o, st, out)
	rep := demoReport{Path: path, Children: o.Children}
	if err := r.run(ctx); err != nil {
		return rep, err
	}
	rep = r.report(ctx, rep)
	printDemoSummary(out, rep, o)
	if len(rep.Failed) == 0 && o.Orders > 0 {
		if rep.Pipeline, err = runDemoPipeline(ctx, out, st, o); err != nil {
			return rep, err
		}
	}
	if o.Keep || o.DB != "" {
		fmt.Fprintf(out, "\nThe database is kept at %s; look inside with:\n  plenum inspect --db %s\n", path, shellQuote(path))
	}
	if len(rep.Failed) > 0 {
		return rep, fmt.Errorf("demo: %s failed: %s", cmdline.Plural(len(rep.Failed), "invariant"), strings.Join(rep.Failed, "; "))
	}
	return rep, nil
}

// checkEmpty refuses tables that already hold work: the invariants count
// exactly, so a second run on the same tables could not check them.
func checkEmpty(ctx context.Context, st *core.Store) error {
	counts, err := st.Counts(ctx, "")
	if err != nil {
		return err
	}
	var n int64
	for _, c := range counts {
		n += c
	}
	var owners int64
	if err := st.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM "+migrations.NamesFor(st.Prefix()).Processes).Scan(&owners); err != nil {
		return err
	}
	if n > 0 || owners > 0 {
		return fmt.Errorf("tables %s* already hold %s and %s; the demo needs empty tables (give a new --db file or another --prefix)",
			st.Prefix(), cmdline.Plural(n, "item"), cmdline.Plural(owners, "owner"))
	}
	return nil
}

// run starts every goroutine of the workflow and waits for the join to
// finish, an error, the timeout or the caller's cancellation.
func (r *demoRun) run(parent context.Context) error {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	r.cancel = cancel
	r.start = time.Now()
	r.lastDone.Store(r.start.UnixNano())

	enq, err := r.st.Enqueue(ctx, core.ItemSpec{Queue: r.parentQ, Kind: "fan-out", Payload: fmt.Appendf(nil, `{"children":%d}`, r.o.Children)})
	if err != nil {
		return fmt.Errorf("demo: enqueue the parent: %w", err)
	}
	parentID := enq[0].ID

	var wg sync.WaitGroup
	spawn := func(f func(context.Context) error) {
		wg.Go(func() {
			if err := f(ctx); err != nil {
				r.fail(err)
			}
		})
	}
	spawn(func(ctx context.Context) error { return r.runWorkers(ctx, parentID) })
	for i := range r.o.Crashes {
		spawn(func(ctx context.Context) error { return r.victim(ctx, i+1) })
	}
	if r.o.Progress > 0 {
		spawn(r.progress)
	}

	timer := time.NewTimer(r.o.Timeout)
	defer timer.Stop()
	select {
	case <-ctx.Done():
	case <-timer.C:
		r.fail(fmt.Errorf("demo: timed out after %v with %s/%s children completed and no join: the workflow is stuck",
			r.o.Timeout, cmdline.Commas(r.completed.Load()), cmdline.Commas(r.o.Children)))
	}
	wg.Wait()
	if r.err != nil {
		return r.err
	}
	if err := parent.Err(); err != nil {
		return fmt.Errorf("demo: interrupted: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.joined {
		return errors.New("demo: stopped before the join ran")
	}
	return nil
}

// fail records the first error of the run and stops it.
func (r *demoRun) fail(err error) {
	r.errOnce.Do(func() {
		r.err = err
		r.cancel()
	})
}

func (r *demoRun) logf(format string, args ...any) {
	fmt.Fprintf(r.out, "%6.1fs  %s\n", time.Since(r.start).Seconds(), fmt.Sprintf(format, args...))
}

// demoOwner is a registered owner with its heartbeat goroutine.
type demoOwner struct {
	id   uuid.UUID
	stop context.CancelFunc
	done chan struct{}
	lost atomic.Bool // the reaper removed it: register again
}

// register records a new owner and starts its heartbeat.
func (r *demoRun) register(ctx context.Context) (*demoOwner, error) {
	id, err := r.st.RegisterOwner(ctx, core.RegisterOwnerParams{})
	if err != nil {
		return nil, fmt.Errorf("demo: register owner: %w", err)
	}
	hctx, stop := context.WithCancel(ctx)
	o := &demoOwner{id: id, stop: stop, done: make(chan struct{})}
	go func() {
		defer close(o.done)
		t := time.NewTicker(r.o.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-hctx.Done():
				return
			case <-t.C:
			}
			err := r.st.Heartbeat(hctx, id)
			switch {
			case err == nil:
			case errors.Is(err, core.ErrOwnerLost):
				o.lost.Store(true)
				return
			case hctx.Err() != nil:
				return
			default:
				r.fail(fmt.Errorf("demo: heartbeat of owner %s: %w", id, err))
				return
			}
		}
	}()
	return o, nil
}

// crash stops the owner's heartbeat the way a dying process would: no
// goodbye, and whatever it holds stays claimed until the reaper acts.
func (o *demoOwner) crash() {
	o.stop()
	<-o.done
}

// page returns the children from cursor on: the same page for the same
// cursor, as Expand requires.
func (r *demoRun) page(_ context.Context, cursor string) (core.ChildPage, error) {
	from := 0
	if cursor != "" {
		n, err := strconv.Atoi(cursor)
		if err != nil || n < 0 || n > r.o.Children {
			return core.ChildPage{}, fmt.Errorf("bad cursor %q", cursor)
		}
		from = n
	}
	to := min(from+r.o.Page, r.o.Children)
	kids := make([]core.ChildSpec, 0, to-from)
	for i := from; i < to; i++ {
		kids = append(kids, core.ChildSpec{Key: childKey(i), Queue: r.childQ, Kind: "square", Payload: fmt.Appendf(nil, `{"n":%d}`, i)})
	}
	return core.ChildPage{Children: kids, Next: strconv.Itoa(to), Done: to == r.o.Children}, nil
}

func childKey(i int) string { return "child-" + strconv.Itoa(i) }

// failsOnce reports whether child n is planned to fail its first attempt.
func (r *demoRun) failsOnce(n int64) bool {
	return r.o.FailEvery > 0 && n%int64(r.o.FailEvery) == int64(r.o.FailEvery-1)
}

// readChildren pages through the join's barrier's children and checks each.
func (r *demoRun) readChildren(ctx context.Context, c core.Item) (joinCheck, error) {
	jc := joinCheck{JoinID: c.ID, Barrier: c.JoinOf}
	if c.JoinOf == uuid.Nil {
		return jc, fmt.Errorf("demo: join item %s names no barrier", c.ID)
	}
	problem := func(format string, args ...any) {
		if jc.Example == "" {
			jc.Example = fmt.Sprintf(format, args...)
		}
	}
	seen := make([]bool, r.o.Children)
	scope := c.JoinOf.String() + "/"
	after := uuid.Nil
	for {
		page, err := r.st.Children(ctx, core.ChildrenParams{Barrier: c.JoinOf, After: after, Limit: 1000})
		if err != nil {
			return jc, fmt.Errorf("demo: join: read children: %w", err)
		}
		if len(page) == 0 {
			break
		}
		for _, it := range page {
			after = it.ID
			jc.Seen++
			i, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(it.Key, scope), "child-"))
			if err != nil || !strings.HasPrefix(it.Key, scope+"child-") || i < 0 || i >= r.o.Children {
				jc.BadKeys++
				problem("child %s has key %q", it.ID, it.Key)
				continue
			}
			if seen[i] {
				jc.Duplicates++
				problem("key %s seen twice", childKey(i))
			}
			seen[i] = true
			if it.State != core.StateCompleted {
				jc.NotDone++
				problem("%s is %s", childKey(i), it.State)
				continue
			}
			var res struct {
				N      int64 `json:"n"`
				Square int64 `json:"square"`
			}
			if err := json.Unmarshal(it.Result, &res); err != nil || res.N != int64(i) || res.Square != int64(i)*int64(i) {
				jc.BadResults++
				problem("%s has result %s", childKey(i), it.Result)
				continue
			}
			jc.SumSquares += uint64(res.Square)
			want := 1
			if r.failsOnce(int64(i)) {
				want = 2
			}
			if it.Attempt != want {
				jc.BadAttempts++
				problem("%s finished at attempt %d, want %d", childKey(i), it.Attempt, want)
			}
		}
	}
	for i, ok := range seen {
		if !ok {
			jc.Missing++
			problem("%s missing", childKey(i))
		}
	}
	return jc, nil
}

// progress prints a line every interval.
func (r *demoRun) progress(ctx context.Context) error {
	t := time.NewTicker(r.o.Progress)
	defer t.Stop()
	last, lastAt := int64(0), time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			done := r.completed.Load()
			line := fmt.Sprintf("completed %s/%s  %s items/s  retries %s  crashes reaped %s",
				cmdline.Commas(done), cmdline.Commas(r.o.Children), rate(done-last, now.Sub(lastAt)),
				cmdline.Commas(r.retries.Load()), cmdline.Commas(r.crashed.Load()))
			if waiting := r.abandoned.Load() - r.crashed.Load(); waiting > 0 {
				line += fmt.Sprintf("  (%s of dead workers awaiting the reaper)", cmdline.Plural(waiting, "claim"))
			}
			r.logf("%s", line)
			last, lastAt = done, now
		}
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ignoreCancel drops err when the run was stopped: errors from operations
// cut short by the end of the run are not failures.
func ignoreCancel(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
