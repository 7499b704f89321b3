package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/sqlite"
)

// benchAbout is the bench command's help. It names the dialects this
// binary can open, which depends on the packages it links.
func benchAbout() string {
	return fmt.Sprintf(`
Measures Plenum's hot path on one database and, in the same run on the
same database, a bare-SQL baseline doing the same work without fencing:

  enqueue          Store.Enqueue      vs  multi-row INSERT
  claim+complete   Store.Claim and    vs  the dialect's claim statement with
                   Store.CompleteMany     no owner check and no claim token
                                          (on SQLite UPDATE ... WHERE id IN
                                          (SELECT ... LIMIT n) RETURNING;
                                          SKIP LOCKED where there are row
                                          locks), then UPDATE ... SET state =
                                          'completed' WHERE id IN (...)
  fan-in           children of one    vs  the same claims, then one transaction
                   barrier completed      per child that completes it and adds
                   in batches             1 to a counter row
  runtime          package worker:    vs  the claim+complete baseline
                   --workers workers of
                   --batch slots each,
                   no-op handlers

Then the pickup latency, from enqueue to handler start (p50 and p99 of
--pickups single enqueues, each to an idle worker polling every %v):
woken in-process (an enqueue through the worker's own store), woken by
NOTIFY (an enqueue through another store on the same tables, as another
process would make: only on a dialect with a notifier, PostgreSQL), and by
polling alone (worker.Config.PollOnly).

The database is SQLite by default, in a file in a new temporary directory
(--db names another file); --dialect and --dsn choose any database this
binary can open (%s).

The baseline is the most direct correct SQL on that database: its
statements use the dialect's placeholders, clock, value types and claim;
its transactions begin as the dialect requires, and are run again, like
Plenum's, when the database reports a conflict worth retrying (both
sides' retries are printed). On a single-writer database (SQLite) its
writers take turns on an in-process mutex, as Plenum's do, so that neither
side spends its time in the database's busy handler. Both sides work on
tables with the same columns and indexes, created from the same schema
under random prefixes and dropped afterwards: on a shared server no other
table is touched (though the load is felt). This is a measurement, never a
pass/fail on timing.`, latencyPoll, strings.Join(openable(), ", "))
}

// benchOptions configure a bench run.
type benchOptions struct {
	Dialect string // registered dialect name; "" means sqlite
	DSN     string // database to measure on; "" only for a file dialect (a new file is made)
	DB      string // another spelling of DSN for dialects whose DSN is a file
	Items   int
	Batch   int
	Workers int
	// Pickups is how many single enqueues each pickup latency is
	// measured over; 0 measures none.
	Pickups int
}

func defaultBenchOptions() benchOptions {
	return benchOptions{Dialect: sqlite.Name, Items: 20000, Batch: 100, Workers: 4, Pickups: 30}
}

func (o benchOptions) validate() error {
	switch {
	case o.Items < 1 || o.Items > 10_000_000:
		return usagef("--items %d: want 1 to 10,000,000", o.Items)
	case o.Batch < 1 || o.Batch > core.MaxClaimLimit:
		return usagef("--batch %d: want 1 to %d", o.Batch, core.MaxClaimLimit)
	case o.Workers < 1 || o.Workers > 256:
		return usagef("--workers %d: want 1 to 256", o.Workers)
	case o.Pickups < 0 || o.Pickups > 10_000:
		return usagef("--pickups %d: want 0 to 10,000", o.Pickups)
	}
	return nil
}

// target returns the registration of the dialect and the DSN the options
// name. The DSN is "" only for a dialect whose databases are files: bench
// then makes one.
func (o benchOptions) target() (dialect.Registration, string, error) {
	name := o.Dialect
	if name == "" {
		name = sqlite.Name
	}
	r, err := lookupRegistration(name)
	if err != nil {
		return dialect.Registration{}, "", err
	}
	dsn, err := dsnOrDB(r, o.DSN, o.DB)
	if err != nil {
		return dialect.Registration{}, "", err
	}
	return r, dsn, nil
}

// openBenchDB opens the database of the options, making a new file in a
// new temporary directory when a file dialect was given no DSN. where names
// the database for the header: the file path, or "" for a server, whose DSN
// may hold a password. close closes the database and removes that
// directory.
func openBenchDB(o benchOptions) (db *sql.DB, d dialect.Dialect, where string, close func(), err error) {
	r, dsn, err := o.target()
	if err != nil {
		return nil, nil, "", nil, err
	}
	dir := ""
	if dsn == "" {
		if dir, err = os.MkdirTemp("", "plenum-bench-"); err != nil {
			return nil, nil, "", nil, fmt.Errorf("bench: temporary directory: %w", err)
		}
		dsn = filepath.Join(dir, "bench.db")
	}
	db, d, err = openDialect(r.Dialect.Name(), dsn)
	if err != nil {
		if dir != "" {
			os.RemoveAll(dir)
		}
		var ue *usageError
		if errors.As(err, &ue) {
			return nil, nil, "", nil, err
		}
		return nil, nil, "", nil, fmt.Errorf("bench: %w", err)
	}
	if r.DSN.File {
		where = dsn
	}
	return db, d, where, func() {
		db.Close()
		if dir != "" {
			os.RemoveAll(dir)
		}
	}, nil
}

// checkpointFor returns the checkpoint d's registration brings, or nil
// when the database needs nothing between measurements.
func checkpointFor(d dialect.Dialect) func(context.Context, *sql.DB) error {
	r, err := dialect.Registered(d.Name())
	if err != nil {
		return nil
	}
	return r.Checkpoint
}

func runBenchCmd(ctx context.Context, e env, args []string) error {
	o := defaultBenchOptions()
	fs := newFlags(e, "bench", "bench [--dialect NAME --dsn DSN] [flags]", benchAbout())
	fs.StringVar(&o.Dialect, "dialect", o.Dialect, "`name` of the database dialect to measure on")
	fs.StringVar(&o.DSN, "dsn", "", "`DSN` of the database to measure on (required, except for sqlite, where it is a file path as for --db)")
	fs.StringVar(&o.DB, "db", "", "SQLite database `file` to use (default: one in a new temporary directory)")
	fs.IntVar(&o.Items, "items", o.Items, "items per measurement")
	fs.IntVar(&o.Batch, "batch", o.Batch, "items claimed and completed per batch")
	fs.IntVar(&o.Workers, "workers", o.Workers, "concurrent workers")
	fs.IntVar(&o.Pickups, "pickups", o.Pickups, "single enqueues each pickup latency is measured over (0: none)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	_, err := runBench(ctx, e.stdout, o)
	return err
}

// benchRow is one measurement: Plenum's rate and the baseline's, per
// second.
type benchRow struct {
	Name             string
	Plenum, Baseline float64
}

// Ratio is Plenum's rate over the baseline's.
func (r benchRow) Ratio() float64 {
	if r.Baseline == 0 {
		return 0
	}
	return r.Plenum / r.Baseline
}

// benchReport is what a bench run measured.
type benchReport struct {
	Dialect string
	Path    string // the database file, for a dialect whose DSN is one
	// Prefixes are the table prefixes of Plenum's tables and the
	// baseline's, both dropped when the run ends.
	Prefixes [2]string
	Rows     []benchRow
	// Latency is the pickup latency section, one row per way of finding
	// new items.
	Latency []latencyRow
	// TxRetries and BaseRetries count the transactions Plenum and the
	// baseline ran again after a retryable error.
	TxRetries, BaseRetries uint64
}

// runBench opens the database of o, runs every measurement and prints the
// table to w.
func runBench(ctx context.Context, w io.Writer, o benchOptions) (benchReport, error) {
	if err := o.validate(); err != nil {
		return benchReport{}, err
	}
	db, d, path, closeDB, err := openBenchDB(o)
	if err != nil {
		return benchReport{}, err
	}
	defer closeDB()
	return benchOn(ctx, w, db, d, path, o)
}

// benchOn runs every measurement on db, of dialect d, and prints the table
// to w; path, if not empty, is the database file for the header.
func benchOn(ctx context.Context, w io.Writer, db *sql.DB, d dialect.Dialect, path string, o benchOptions) (rep benchReport, err error) {
	// Fresh tables under random prefixes, dropped afterwards, so that a
	// bench never touches other data in the database. A table left behind
	// on a shared server is worth an error naming it.
	tag := randomTag()
	pPrefix, bPrefix := "bench_"+tag+"_", "base_"+tag+"_"
	rep = benchReport{Dialect: d.Name(), Path: path, Prefixes: [2]string{pPrefix, bPrefix}}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		for _, prefix := range rep.Prefixes {
			if derr := migrations.Drop(dctx, db, d, prefix); derr != nil {
				err = errors.Join(err, fmt.Errorf("bench: drop tables %s*: %w", prefix, derr))
			}
		}
	}()
	st, err := core.Open(ctx, db, d, core.Options{Prefix: pPrefix, Migrate: true})
	if err != nil {
		return rep, fmt.Errorf("bench: %w", err)
	}
	if _, err := migrations.Apply(ctx, db, d, bPrefix); err != nil {
		return rep, fmt.Errorf("bench: baseline tables: %w", err)
	}
	b := newBaseline(db, d, migrations.NamesFor(bPrefix), o.Batch)

	if path != "" {
		fmt.Fprintf(w, "Plenum bench on %s: %s\n", d.Name(), path)
	} else {
		fmt.Fprintf(w, "Plenum bench on %s\n", d.Name())
	}
	fmt.Fprintf(w, "%s items per measurement, batches of %d, %s; Plenum and a bare-SQL baseline on the same database\n",
		commas(o.Items), o.Batch, plural(o.Workers, "worker"))
	fmt.Fprintf(w, "tables %s* (Plenum) and %s* (bare SQL), dropped afterwards\n\n", pPrefix, bPrefix)
	fmt.Fprintf(w, "  %-16s %14s %14s %10s\n", "", "plenum", "bare SQL", "ratio")

	// Each side starts with the database settled (for SQLite an empty
	// write-ahead log), so that neither pays for the other's leftovers.
	settle := func() error { return nil }
	if c := checkpointFor(d); c != nil {
		settle = func() error { return c(ctx, db) }
	}
	measure := func(name string, plenum, base func(context.Context) error) error {
		if err := settle(); err != nil {
			return fmt.Errorf("bench: checkpoint: %w", err)
		}
		p, err := timed(ctx, o.Items, plenum)
		if err != nil {
			return fmt.Errorf("bench: %s (plenum): %w", name, err)
		}
		if err := settle(); err != nil {
			return fmt.Errorf("bench: checkpoint: %w", err)
		}
		q, err := timed(ctx, o.Items, base)
		if err != nil {
			return fmt.Errorf("bench: %s (baseline): %w", name, err)
		}
		row := benchRow{Name: name, Plenum: p, Baseline: q}
		rep.Rows = append(rep.Rows, row)
		fmt.Fprintf(w, "  %-16s %12s/s %12s/s %10.2f\n", name, commas(int64(p)), commas(int64(q)), row.Ratio())
		return nil
	}

	const queue, fanQueue = "bench", "bench.fanin"
	err = measure("enqueue",
		func(ctx context.Context) error { return plenumEnqueue(ctx, st, queue, o.Items) },
		func(ctx context.Context) error { return b.enqueue(ctx, queue, o.Items, uuid.Nil) })
	if err != nil {
		return rep, err
	}
	err = measure("claim+complete",
		func(ctx context.Context) error { return plenumDrain(ctx, st, queue, o) },
		func(ctx context.Context) error { return b.drain(ctx, queue, o.Workers, nil) })
	if err != nil {
		return rep, err
	}
	if err := checkDrained(ctx, st, b, queue, o.Items); err != nil {
		return rep, fmt.Errorf("bench: claim+complete: %w", err)
	}

	// Fan-in: the children exist before the clock starts on both sides;
	// what is measured is claiming and completing them, arrivals counted.
	barrier, err := plenumFanOut(ctx, st, fanQueue, o.Items)
	if err != nil {
		return rep, fmt.Errorf("bench: fan-in setup (plenum): %w", err)
	}
	bb, err := b.fanOut(ctx, fanQueue, o.Items)
	if err != nil {
		return rep, fmt.Errorf("bench: fan-in setup (baseline): %w", err)
	}
	err = measure("fan-in arrivals",
		func(ctx context.Context) error { return plenumDrain(ctx, st, fanQueue, o) },
		func(ctx context.Context) error { return b.drain(ctx, fanQueue, o.Workers, bb) })
	if err != nil {
		return rep, err
	}
	if err := checkFired(ctx, st, b, barrier, bb, o.Items); err != nil {
		return rep, fmt.Errorf("bench: fan-in: %w", err)
	}
	// The runtime: the same claim+complete through package worker, with
	// no-op handlers; the items exist before the clock starts.
	const rtQueue = "bench.runtime"
	if err := plenumEnqueue(ctx, st, rtQueue, o.Items); err != nil {
		return rep, fmt.Errorf("bench: runtime setup (plenum): %w", err)
	}
	if err := b.enqueue(ctx, rtQueue, o.Items, uuid.Nil); err != nil {
		return rep, fmt.Errorf("bench: runtime setup (baseline): %w", err)
	}
	err = measure("runtime",
		func(ctx context.Context) error { return runtimeDrain(ctx, st, rtQueue, o.Items, o) },
		func(ctx context.Context) error { return b.drain(ctx, rtQueue, o.Workers, nil) })
	if err != nil {
		return rep, err
	}
	if err := checkDrained(ctx, st, b, rtQueue, o.Items); err != nil {
		return rep, fmt.Errorf("bench: runtime: %w", err)
	}
	rep.TxRetries, rep.BaseRetries = st.Stats().Retries, b.retries.Load()
	fmt.Fprintf(w, "\nratio = plenum / bare SQL (above 1: Plenum is faster). Transactions retried: Plenum %s, bare SQL %s.\n",
		commas(rep.TxRetries), commas(rep.BaseRetries))
	if o.Pickups > 0 {
		if rep.Latency, err = benchLatency(ctx, w, st, o.Pickups); err != nil {
			return rep, err
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "Timings vary between runs and machines: this is a measurement, not a test.")
	return rep, nil
}

// timed runs f and returns n over the time it took, per second.
func timed(ctx context.Context, n int, f func(context.Context) error) (float64, error) {
	start := time.Now()
	if err := f(ctx); err != nil {
		return 0, err
	}
	return float64(n) / max(time.Since(start), time.Microsecond).Seconds(), nil
}

func randomTag() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// benchChunk is how many items one enqueue call or baseline insert
// transaction writes.
const benchChunk = 1000

func plenumEnqueue(ctx context.Context, st *core.Store, queue string, n int) error {
	specs := make([]core.ItemSpec, 0, benchChunk)
	for i := 0; i < n; i += benchChunk {
		specs = specs[:0]
		for j := i; j < min(i+benchChunk, n); j++ {
			specs = append(specs, core.ItemSpec{Queue: queue, Kind: "bench", Payload: fmt.Appendf(nil, `{"n":%d}`, j)})
		}
		if _, err := st.Enqueue(ctx, specs...); err != nil {
			return err
		}
	}
	return nil
}

// plenumFanOut enqueues a parent and expands it into n children of one
// barrier, leaving them for plenumDrain.
func plenumFanOut(ctx context.Context, st *core.Store, queue string, n int) (uuid.UUID, error) {
	owner, err := st.RegisterOwner(ctx, core.OwnerParams{})
	if err != nil {
		return uuid.Nil, err
	}
	defer func() { _ = st.Deregister(context.WithoutCancel(ctx), owner) }() // holds nothing by then
	if _, err := st.Enqueue(ctx, core.ItemSpec{Queue: queue + ".parent", Kind: "fan-out"}); err != nil {
		return uuid.Nil, err
	}
	cs, err := st.Claim(ctx, core.ClaimParams{Queue: queue + ".parent", Owner: owner, Limit: 1, Lease: time.Hour})
	if err != nil {
		return uuid.Nil, err
	}
	if len(cs) != 1 {
		return uuid.Nil, errors.New("the parent was not claimable")
	}
	res, err := st.Expand(ctx, cs[0], core.ExpandParams{
		Barrier: core.BarrierSpec{Name: "bench", Join: core.JoinSpec{Queue: queue + ".join", Kind: "join"}},
		Next: func(_ context.Context, cursor string) (core.ChildPage, error) {
			from := 0
			if cursor != "" {
				if _, err := fmt.Sscan(cursor, &from); err != nil {
					return core.ChildPage{}, fmt.Errorf("bad cursor %q", cursor)
				}
			}
			to := min(from+benchChunk, n)
			kids := make([]core.ChildSpec, 0, to-from)
			for i := from; i < to; i++ {
				kids = append(kids, core.ChildSpec{Key: fmt.Sprint(i), Queue: queue, Kind: "bench", Payload: fmt.Appendf(nil, `{"n":%d}`, i)})
			}
			return core.ChildPage{Children: kids, Next: fmt.Sprint(to), Done: to == n}, nil
		},
		CompleteParent: true,
	})
	if err != nil {
		return uuid.Nil, err
	}
	return res.Barrier.ID, nil
}

// benchResult is the result every completion carries, on both sides.
var benchResult = []byte(`{"ok":true}`)

// plenumDrain claims and completes everything in queue with o.Workers
// workers, each its own owner, until the queue is empty.
func plenumDrain(ctx context.Context, st *core.Store, queue string, o benchOptions) error {
	return fanWorkers(ctx, o.Workers, func(ctx context.Context) error {
		owner, err := st.RegisterOwner(ctx, core.OwnerParams{})
		if err != nil {
			return err
		}
		defer func() { _ = st.Deregister(context.WithoutCancel(ctx), owner) }() // holds nothing by then
		done := make([]core.Completion, 0, o.Batch)
		for {
			cs, err := st.Claim(ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: o.Batch, Lease: time.Hour})
			if err != nil || len(cs) == 0 {
				return err
			}
			done = done[:0]
			for _, c := range cs {
				done = append(done, core.Completion{Claim: c, Result: benchResult})
			}
			lost, err := st.CompleteMany(ctx, done)
			if err != nil {
				return err
			}
			if len(lost) > 0 {
				return fmt.Errorf("%s lost claims with no reaper running", plural(len(lost), "completion"))
			}
		}
	})
}

// fanWorkers runs f in n goroutines and returns the first error; the first
// error stops the others.
func fanWorkers(ctx context.Context, n int, f func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for range n {
		wg.Go(func() {
			if err := f(ctx); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		})
	}
	wg.Wait()
	return first
}

// baseline does the same work as Plenum with plain statements on tables of
// the same shape: no claim tokens checked, no owners, no fences. It is the
// most direct correct SQL for the database: every piece that differs
// between databases (placeholders, the clock, how values are bound, how a
// transaction begins, the claim statement) comes from the dialect, so that
// both sides pay the same for what the database needs and the difference
// is what Plenum adds.
type baseline struct {
	db    *sql.DB
	d     dialect.Dialect
	names migrations.Names
	// batch is the claim limit: the --batch flag, fitted to one IN list of
	// the completion that follows.
	batch int
	// now, later and json are the dialect's clock expression, the clock
	// plus a bound number of microseconds, and the placeholder of a JSON
	// value.
	now, later, json string
	// maxRows and maxBytes bound one multi-row INSERT: the bind-parameter
	// limit over the parameters of a row, and the statement size limit
	// (0: none).
	maxRows, maxBytes int
	// writer, on a single-writer database, makes the baseline's write
	// transactions take turns, as Plenum's do (for SQLite the dialect's
	// Begin queues the writers of one *sql.DB too): concurrent writers
	// would otherwise wait in the database's busy handler, whose sleeps
	// would make the baseline look slower than it is. Nil elsewhere, where
	// writers run side by side and row locks keep them apart.
	writer *sync.Mutex
	// retries counts transactions run again after a retryable error.
	retries atomic.Uint64
}

// Bounds of the baseline's retries: Plenum's defaults (core.RetryPolicy),
// so that neither side wins by giving up sooner or waiting less.
const (
	baseMaxAttempts = 10
	baseRetryDelay  = 2 * time.Millisecond
	baseMaxDelay    = 250 * time.Millisecond
)

// Per-row cost of the baseline's INSERT: its bind parameters (id, queue,
// payload, barrier) and a bound on its bytes besides the payload, as
// Plenum's enqueue counts them for statement size limits.
const (
	baseArgsPerRow  = 4
	baseRowOverhead = 256
)

// baseLease is the lease the baseline's claims set, in microseconds: an
// hour, as Plenum's side asks for.
const baseLease = int64(time.Hour / time.Microsecond)

func newBaseline(db *sql.DB, d dialect.Dialect, names migrations.Names, batch int) *baseline {
	caps := d.Capabilities()
	now := d.Now(0)
	b := &baseline{
		db:       db,
		d:        d,
		names:    names,
		batch:    min(batch, inListMax(caps, 1)),
		now:      now,
		later:    d.AddMicros(now),
		json:     d.Param(dialect.JSON),
		maxRows:  max(1, caps.MaxBindParams/baseArgsPerRow),
		maxBytes: caps.MaxStatementBytes,
	}
	if caps.SingleWriter {
		b.writer = new(sync.Mutex)
	}
	return b
}

// inListMax is the most values an IN list may carry next to extra other
// bind parameters.
func inListMax(caps dialect.Capabilities, extra int) int {
	n := caps.MaxBindParams - extra
	if caps.MaxInList > 0 {
		n = min(n, caps.MaxInList)
	}
	return max(1, n)
}

// baseBarrier is the baseline's fan-in: a counter row and its children.
type baseBarrier struct {
	id    uuid.UUID
	fired atomic.Int64
}

// enqueue inserts n items into queue, benchChunk per transaction, in
// multi-row INSERTs as large as the dialect's limits allow; with a barrier
// other than uuid.Nil, as its children.
func (b *baseline) enqueue(ctx context.Context, queue string, n int, barrier uuid.UUID) error {
	row := "(?, ?, 'bench', NULL, " + b.json + ", 0, 'available', " + b.now + ", 0, 20, 0, ?, " + b.now + ")"
	head := "INSERT INTO " + b.names.Items + " (id, queue, kind, unique_key, payload, priority, state, available_at, attempt, max_attempts, crash_count, barrier_id, created_at) VALUES "
	var bar any // NULL unless the items are a barrier's children
	if barrier != uuid.Nil {
		bar = b.d.UUID(barrier)
	}
	type stmt struct {
		text string
		args []any
	}
	var stmts []stmt
	for i := 0; i < n; i += benchChunk {
		// Statements are built before the transaction begins, so that a
		// retry runs the same ones and a single-writer database is not held
		// while they are.
		stmts = stmts[:0]
		var (
			q     strings.Builder
			args  []any
			bytes int
		)
		flush := func() {
			stmts = append(stmts, stmt{b.d.Rebind(q.String()), args})
			q.Reset()
			args, bytes = nil, 0
		}
		for j := i; j < min(i+benchChunk, n); j++ {
			payload := fmt.Appendf(nil, `{"n":%d}`, j)
			size := len(row) + len(queue) + len(payload) + baseRowOverhead
			rows := len(args) / baseArgsPerRow
			if rows == b.maxRows || (b.maxBytes > 0 && rows > 0 && len(head)+bytes+size > b.maxBytes) {
				flush()
				rows = 0
			}
			if rows == 0 {
				q.WriteString(head)
			} else {
				q.WriteString(", ")
			}
			q.WriteString(row)
			bytes += size
			args = append(args, b.d.UUID(uuid.Must(uuid.NewV7())), queue, b.d.JSON(payload), bar)
		}
		flush()
		err := b.tx(ctx, func(tx dialect.Tx) error {
			for _, s := range stmts {
				if _, err := tx.ExecContext(ctx, s.text, s.args...); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// tx runs f in a write transaction begun by the dialect (which chooses the
// isolation level its claims need), and runs it again, after a jittered
// backoff, when it fails with an error the dialect calls Retryable: a
// serialization failure, a deadlock victim, a busy database. Bare SQL on
// such a database has to do the same. f must start from scratch on each
// call.
func (b *baseline) tx(ctx context.Context, f func(dialect.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := b.try(ctx, f)
		if err == nil || b.d.Classify(err) != dialect.Retryable || attempt >= baseMaxAttempts || ctx.Err() != nil {
			return err
		}
		b.retries.Add(1)
		delay := min(baseRetryDelay<<(attempt-1), baseMaxDelay)
		t := time.NewTimer(time.Duration(mrand.Int64N(int64(delay) + 1)))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// try runs f in one transaction, rolled back if f fails. The writer mutex,
// where there is one, is held for the transaction only, not for a retry's
// backoff.
func (b *baseline) try(ctx context.Context, f func(dialect.Tx) error) error {
	if b.writer != nil {
		b.writer.Lock()
		defer b.writer.Unlock()
	}
	tx, err := b.d.Begin(ctx, b.db, dialect.TxOptions{})
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// fanOut creates a sealed counter row expecting n children, and the
// children.
func (b *baseline) fanOut(ctx context.Context, queue string, n int) (*baseBarrier, error) {
	bb := &baseBarrier{id: uuid.Must(uuid.NewV7())}
	owner := uuid.Must(uuid.NewV7())
	insert := b.d.Rebind("INSERT INTO " + b.names.Barriers + " (id, owner_id, name, expected, arrived, failed, sealed, join_queue, join_kind, join_priority, join_max_attempts, on_child_failure, created_at) " +
		"VALUES (?, ?, 'bench', ?, 0, 0, ?, ?, 'join', 0, 20, 'join', " + b.now + ")")
	err := b.tx(ctx, func(tx dialect.Tx) error {
		_, err := tx.ExecContext(ctx, insert, b.d.UUID(bb.id), b.d.UUID(owner), int64(n), b.d.Bool(true), queue+".join")
		return err
	})
	if err != nil {
		return nil, err
	}
	return bb, b.enqueue(ctx, queue, n, bb.id)
}

// drain claims and completes everything in queue with n workers. With a
// barrier, each child is completed in its own transaction that also adds
// one to the counter row and fires it when the count is complete.
func (b *baseline) drain(ctx context.Context, queue string, n int, bb *baseBarrier) error {
	return fanWorkers(ctx, n, func(ctx context.Context) error {
		worker := uuid.Must(uuid.NewV7())
		for {
			ids, err := b.claim(ctx, queue, worker)
			if err != nil || len(ids) == 0 {
				return err
			}
			if bb == nil {
				err = b.completeMany(ctx, ids)
			} else {
				err = b.arriveEach(ctx, ids, bb)
			}
			if err != nil {
				return err
			}
		}
	})
}

// claim takes up to b.batch available items of queue for worker with the
// dialect's claim statement: on SQLite one UPDATE ... RETURNING, on a
// database with row locks one statement with SKIP LOCKED (or its
// lock-then-update pair where UPDATE ... RETURNING does not exist). The
// spec is the least a claim needs: no check that the worker is still
// registered, no claim token.
func (b *baseline) claim(ctx context.Context, queue string, worker uuid.UUID) ([]uuid.UUID, error) {
	spec := dialect.ClaimSpec{
		Table:      b.names.Items,
		Key:        "id",
		Filter:     "queue = ? AND state = 'available' AND available_at <= " + b.now,
		FilterArgs: []any{queue},
		OrderBy:    "priority, available_at, id",
		Limit:      b.batch,
		Set:        "state = 'claimed', claimed_by = ?, claimed_at = " + b.now + ", lease_expires_at = " + b.later + ", attempt = attempt + 1",
		SetArgs:    []any{b.d.UUID(worker), baseLease},
		// What a worker needs to do the work; Plenum returns the whole
		// item.
		Returning: []string{"id", "kind", "payload", "attempt"},
	}
	var ids []uuid.UUID
	err := b.tx(ctx, func(tx dialect.Tx) error {
		ids = ids[:0]
		rows, err := b.d.Claim(ctx, tx, spec)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var (
				// uuid.UUID reads both 16 bytes and text (PostgreSQL's
				// uuid); []byte takes a JSON column as bytes or text.
				id      uuid.UUID
				kind    string
				payload []byte
				attempt int
			)
			if err := rows.Scan(&id, &kind, &payload, &attempt); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return rows.Err()
	})
	return ids, err
}

// completeMany completes the items ids in one UPDATE. ids fits one IN list:
// claims are never larger than b.batch.
func (b *baseline) completeMany(ctx context.Context, ids []uuid.UUID) error {
	args := make([]any, 0, len(ids)+1)
	args = append(args, b.d.JSON(benchResult))
	for _, id := range ids {
		args = append(args, b.d.UUID(id))
	}
	update := b.d.Rebind("UPDATE " + b.names.Items + " SET state = 'completed', finished_at = " + b.now +
		", lease_expires_at = NULL, result = " + b.json + " WHERE id IN (" + dialect.Placeholders(len(ids)) + ")")
	return b.tx(ctx, func(tx dialect.Tx) error {
		_, err := tx.ExecContext(ctx, update, args...)
		return err
	})
}

// arriveEach is the per-child counter pattern: one transaction per child.
func (b *baseline) arriveEach(ctx context.Context, ids []uuid.UUID, bb *baseBarrier) error {
	complete := b.d.Rebind("UPDATE " + b.names.Items + " SET state = 'completed', finished_at = " + b.now +
		", lease_expires_at = NULL, result = " + b.json + " WHERE id = ?")
	arrive := b.d.Rebind("UPDATE " + b.names.Barriers + " SET arrived = arrived + 1 WHERE id = ?")
	// fired_at IS NULL makes a matching update always change a value, so
	// its row count is the same on databases that count changed rows
	// (MySQL) as on those that count matched ones.
	fire := b.d.Rebind("UPDATE " + b.names.Barriers + " SET fired_at = " + b.now +
		" WHERE id = ? AND fired_at IS NULL AND sealed = ? AND arrived + failed = expected")
	barrier, sealed := b.d.UUID(bb.id), b.d.Bool(true)
	for _, id := range ids {
		fired := false
		err := b.tx(ctx, func(tx dialect.Tx) error {
			fired = false
			if _, err := tx.ExecContext(ctx, complete, b.d.JSON(benchResult), b.d.UUID(id)); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, arrive, barrier); err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, fire, barrier, sealed)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			fired = n == 1
			return err
		})
		if err != nil {
			return err
		}
		// Counted once committed: a transaction run again must not count
		// twice.
		if fired {
			bb.fired.Add(1)
		}
	}
	return nil
}

// checkDrained makes sure both sides really completed every item.
func checkDrained(ctx context.Context, st *core.Store, b *baseline, queue string, n int) error {
	counts, err := st.Counts(ctx, queue)
	if err != nil {
		return err
	}
	if counts[core.StateCompleted] != int64(n) || len(counts) != 1 {
		return fmt.Errorf("plenum left states %v, want %d completed", counts, n)
	}
	var done int64
	q := b.d.Rebind("SELECT COUNT(*) FROM " + b.names.Items + " WHERE queue = ? AND state = 'completed'")
	if err := b.db.QueryRowContext(ctx, q, queue).Scan(&done); err != nil {
		return err
	}
	if done != int64(n) {
		return fmt.Errorf("baseline completed %d items, want %d", done, n)
	}
	return nil
}

// checkFired makes sure both barriers counted every arrival and fired once.
func checkFired(ctx context.Context, st *core.Store, b *baseline, id uuid.UUID, bb *baseBarrier, n int) error {
	got, err := st.GetBarrier(ctx, id)
	if err != nil {
		return err
	}
	if !got.Fired() || got.Arrived != int64(n) || got.Failed != 0 {
		return fmt.Errorf("plenum barrier: fired %v, arrived %d, failed %d; want fired, %d, 0", got.Fired(), got.Arrived, got.Failed, n)
	}
	var arrived int64
	q := b.d.Rebind("SELECT arrived FROM " + b.names.Barriers + " WHERE id = ?")
	if err := b.db.QueryRowContext(ctx, q, b.d.UUID(bb.id)).Scan(&arrived); err != nil {
		return err
	}
	if arrived != int64(n) || bb.fired.Load() != 1 {
		return fmt.Errorf("baseline barrier: arrived %d, fired %d times; want %d, once", arrived, bb.fired.Load(), n)
	}
	return nil
}
