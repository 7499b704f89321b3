package bench

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	_ "github.com/plenumdb/plenum/dialect/builtin" // every dialect the module ships, for --dialect
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/sqlite"
)

// benchAbout is the bench command's help. It names the dialects this
// binary can open, which depends on the packages it links.
func benchAbout() string {
	return fmt.Sprintf(`
Measures Plenum's hot path on one database and, in the same run on the
same database, a baseline of the SQL a strong engineer would write by hand
for that database, doing the same work:

  enqueue          Store.Enqueue      vs  multi-row INSERT
  claim+complete   Store.Claim and    vs  a claim in claim order that passes
                   Store.CompleteMany     over locked rows (FOR UPDATE SKIP
                                          LOCKED; SQLite's UPDATE ... WHERE id
                                          IN (SELECT ... LIMIT n) RETURNING)
                                          under a claim token, returning what a
                                          worker needs, then one UPDATE of the
                                          rows that still hold the token
  fan-in arrivals  children of one    vs  the same, each batch's completion
                   barrier completed      adding its count to a counter row in
                   in batches             one update, and firing it once
  runtime          package worker:    vs  the claim+complete baseline
                   --workers workers of
                   --batch slots each,
                   no-op handlers
  minimal          Store.Claim and    vs  the claim+complete baseline's loop
                   Store.CompleteMany     on a table with only what it needs:
                                          a primary key, the claim's index
                                          (partial where the database has
                                          them), the columns the claim and
                                          the completion touch (its DDL is
                                          printed; PostgreSQL, SQLite, MySQL)

The ratio, plenum / bare SQL, is the last column. Lines of their own give
each side's statements and transactions per item, the CPU time the process
spent per item on each side, and the transactions each side retried. --sql
prints the statements both sides ran. The baseline's SQL comes in shapes
per database (PostgreSQL: ids bound as one uuid[] array, or as an IN list;
SQLite: json_each or IN lists, with or without statements prepared once;
MySQL/MariaDB: prepared or not, IN lists or JSON_TABLE): --shapes measures
them all first and keeps the fastest, --shape chooses one. Both sides use
the same tables and indexes, the same *sql.DB (its session settings and
durability, printed on the settings line) and the dialect's Begin (its
isolation level), and run a transaction again when the database reports a
conflict worth retrying. Next to the settings, the commit ceiling (for
--ceiling; 0 skips it): the commits a second of --workers sessions, each
updating a row of its own and committing, and what that allows at two
commits per batch of --batch. On a single-writer database (SQLite) the
baseline's writers take turns on an in-process mutex, as Plenum's do.

At scale, behind flags (with --no-table, only these): --fanout N fans out
N children of one barrier against a bare multi-row INSERT of keyed rows
that skips existing keys (ON CONFLICT DO NOTHING, INSERT IGNORE) and
prints each side's peak resident memory; --completed N fills both with N
completed items of the claimed queue and measures claim+complete on them
and on a second pair of empty tables in alternating rounds (--rounds),
printing full / empty per side and round, with the plans of the claim's
read (PostgreSQL and SQLite); --retention then measures Plenum's
claim+complete in rounds alternately without and with Store.Purge deleting
the old items meanwhile (passes of --purge-limit, --purge-pause apart: the
runtime's pace by default), and prints the slowdown per round and overall
and the rate of deletion.

Flow control, behind --flow (Plenum only, no baseline): claim+complete
and the runtime on items with flow keys, as ratios to the same run's
items without flow keys (limits off) and to keyed items without limits:
keys of --items items in runs of 100, key by key (up to 1,000 keys), with
no limit, a concurrency limit of 5 each, a rate limit that does not bind,
and 20 keys with a concurrency limit of 5 (binding when the workers ask
for more than 100 items at once). Then the fairness scenario: the pickup
latency of 100 items of a second key enqueued while the runtime works
through --items items of a first, with and without flow keys, next to a
keyed item's pickup on an empty queue.

The steady state, behind --steady (Plenum's runtime only; bench/river
--steady runs it beside River): a producer keeps about 4,000 items
available, inserting 128 whenever fewer are, while one worker on its
documented defaults runs 64 handlers that each work 1 ms; after
--steady-warmup (30s), --steady-measure (3m) is counted in windows of 5 s,
for --steady-rounds (3) rounds on new queues. It prints each round's
median completion rate over the windows and the pickup latency from
enqueue to handler start (p50, p95, p99).

Then the pickup latency, from enqueue to handler start (p50 and p99 of
--pickups single enqueues, each to an idle worker polling every %v):
woken in-process (an enqueue through the worker's own store), woken by
NOTIFY (an enqueue through another store on the same tables, as another
process would make: only on a dialect with a notifier, PostgreSQL), and by
polling alone (worker.Config.PollOnly).

The database is SQLite by default, in a file in a new temporary directory
(--db names another file); --dialect and --dsn choose any database this
binary can open (%s). Tables go under random prefixes and are dropped
afterwards: on a shared server no other table is touched (though the load
is felt). This is a measurement, never a pass/fail on timing.`, latencyPoll, strings.Join(cmdline.Openable(), ", "))
}

// benchOptions configure a bench run.
type benchOptions struct {
	// Database names the database to measure on; with none, a new SQLite
	// file in a temporary directory.
	cmdline.Database
	Items   int
	Batch   int
	Workers int
	// Pickups is how many single enqueues each pickup latency is
	// measured over; 0 measures none.
	Pickups int
	// Rounds is how many times each row is measured, the side that goes
	// first alternating; the rates are over all rounds. 0 means 1.
	Rounds int
	// SQL prints the statements both sides ran for claim+complete,
	// fan-in and the minimal row.
	SQL bool
	// Shape names the baseline's hand-written shape ("" the best known);
	// Shapes measures every shape first and keeps the fastest.
	Shape  string
	Shapes bool
	// Scale is the measurements at scale, behind their own flags.
	Scale scaleOptions
	// Flow measures flow control too (flow.go): claim+complete and the
	// runtime with limits on against the same items with limits off,
	// and the fairness scenario.
	Flow bool
	// Ceiling is how long the commit ceiling is measured (ceiling.go);
	// 0 measures none.
	Ceiling time.Duration
	// Steady is the steady state (steady.go), behind --steady.
	Steady steadyOptions
}

func defaultBenchOptions() benchOptions {
	return benchOptions{Items: 20000, Batch: 100, Workers: 4, Pickups: 30, Rounds: 1, Ceiling: 2 * time.Second, Steady: defaultSteadyOptions()}
}

func (o benchOptions) validate() error {
	switch {
	case o.Items < 1 || o.Items > 10_000_000:
		return cmdline.Usagef("--items %d: want 1 to 10,000,000", o.Items)
	case o.Batch < 1 || o.Batch > core.MaxClaimLimit:
		return cmdline.Usagef("--batch %d: want 1 to %d", o.Batch, core.MaxClaimLimit)
	case o.Workers < 1 || o.Workers > 256:
		return cmdline.Usagef("--workers %d: want 1 to 256", o.Workers)
	case o.Pickups < 0 || o.Pickups > 10_000:
		return cmdline.Usagef("--pickups %d: want 0 to 10,000", o.Pickups)
	case o.Rounds < 0 || o.Rounds > 100:
		return cmdline.Usagef("--rounds %d: want 1 to 100", o.Rounds)
	case o.Ceiling < 0 || o.Ceiling > 10*time.Minute:
		return cmdline.Usagef("--ceiling %v: want 0 to 10m", o.Ceiling)
	}
	if err := o.Steady.validate(); err != nil {
		return err
	}
	return o.Scale.validate()
}

// target returns the registration of the dialect and the DSN the options
// name. The DSN is "" only for a dialect whose databases are files: bench
// then makes one.
func (o benchOptions) target() (dialect.Registration, string, error) {
	return o.Resolve(sqlite.Name)
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
	db, d, err = cmdline.OpenDialect(r.Dialect.Name(), dsn)
	if err != nil {
		if dir != "" {
			os.RemoveAll(dir)
		}
		var ue *cmdline.UsageError
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

// Run runs the benchmark with the command line args (its flags, without
// the command's name): results go to stdout, usage and flag errors to
// stderr. A mistake in args is a *cmdline.UsageError or
// cmdline.ErrUsageShown, -h is flag.ErrHelp: cmdline.ExitCode maps each to
// its exit status. "plenum bench" and the program bench/plenum both run it.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o := defaultBenchOptions()
	fs := cmdline.NewFlags(stderr, "bench", "bench [[--dialect NAME] --dsn DSN | --db FILE] [flags]", benchAbout())
	o.Register(fs, "", "to measure on (default: a new SQLite file in a temporary directory)")
	fs.IntVar(&o.Items, "items", o.Items, "items per measurement")
	fs.IntVar(&o.Batch, "batch", o.Batch, "items claimed and completed per batch")
	fs.IntVar(&o.Workers, "workers", o.Workers, "concurrent workers")
	fs.IntVar(&o.Pickups, "pickups", o.Pickups, "single enqueues each pickup latency is measured over (0: none)")
	fs.IntVar(&o.Rounds, "rounds", o.Rounds, "rounds per row, the side that goes first alternating")
	fs.BoolVar(&o.SQL, "sql", false, "print the SQL both sides ran for claim+complete and fan-in")
	fs.StringVar(&o.Shape, "shape", "", "the baseline's hand-written `shape` (default: the fastest measured here; see --shapes)")
	fs.BoolVar(&o.Shapes, "shapes", false, "measure claim+complete with every hand-written shape first, and keep the fastest")
	o.Scale.flags(fs)
	fs.DurationVar(&o.Ceiling, "ceiling", o.Ceiling, "measure the server's commit ceiling for this long, at --workers sessions (0: not at all)")
	fs.BoolVar(&o.Flow, "flow", false, "then measure flow control: claim+complete and the runtime with limits on against the same items with limits off, and the fairness scenario")
	fs.BoolVar(&o.Steady.Enabled, "steady", false, "then measure the steady state: a producer keeping about 4,000 items available, 64 handlers of 1 ms")
	fs.DurationVar(&o.Steady.Warmup, "steady-warmup", o.Steady.Warmup, "the steady state's warm-up, per round")
	fs.DurationVar(&o.Steady.Measure, "steady-measure", o.Steady.Measure, "the steady state's measured period, per round")
	fs.IntVar(&o.Steady.Rounds, "steady-rounds", o.Steady.Rounds, "the steady state's rounds")
	var profile string
	fs.StringVar(&profile, "cpuprofile", "", "write a CPU profile of the whole run to `file` (go tool pprof)")
	if err := cmdline.ParseFlags(fs, args); err != nil {
		return err
	}
	if profile != "" {
		stop, err := startCPUProfile(profile)
		if err != nil {
			return err
		}
		defer stop()
	}
	_, err := runBench(ctx, stdout, o)
	return err
}

// startCPUProfile starts writing a CPU profile to path and returns what
// stops it.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, cmdline.Usagef("--cpuprofile: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("bench: cpu profile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// benchRow is one measurement: Plenum's rate and the baseline's, per
// second, and what each side spent on it.
type benchRow struct {
	Name             string
	Plenum, Baseline float64
	// PlenumCounts and BaseCounts are the statements and transactions
	// each side ran over Items items.
	PlenumCounts, BaseCounts counts
	Items                    int
	// PlenumCPU and BaseCPU are the CPU time the bench's process used
	// while each side ran.
	PlenumCPU, BaseCPU time.Duration
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
	// Shape is the baseline's hand-written shape; Shapes the claim+complete
	// rate of each, when --shapes measured them.
	Shape  string
	Shapes []shapeRate
	Rows   []benchRow
	// Latency is the pickup latency section, one row per way of finding
	// new items.
	Latency []latencyRow
	// TxRetries and BaseRetries count the transactions Plenum and the
	// baseline ran again after a retryable error.
	TxRetries, BaseRetries uint64
	// Scale is what the measurements at scale found.
	Scale scaleReport
	// Flow is what --flow measured; nil without it.
	Flow *flowReport
	// Ceiling is the commit ceiling; nil when --ceiling is 0.
	Ceiling *ceilingReport
	// Steady is what --steady measured; nil without it.
	Steady *steadyReport
}

// shapeRate is the claim+complete rate of one hand-written shape.
type shapeRate struct {
	Name string
	Rate float64
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
	// Both sides share db: keep idle as many sessions as the runtime's
	// workers use at once (each a claim loop, two completion flights, a
	// heartbeat and a watcher), so that neither side opens sessions
	// mid-run. database/sql keeps two by default.
	db.SetMaxIdleConns(5*o.Workers + 2)
	return benchOn(ctx, w, db, d, path, o)
}

// sides are the two sides of a bench run on one database: Plenum's store,
// opened on a dialect that counts its statements, and the baseline.
type sides struct {
	st      *core.Store
	counted *stmtCounter
	b       *baseline
	// min is the bare loop on the minimal table (minimal.go); nil for a
	// database the bench has no minimal table for.
	min *baseline
}

// benchOn runs every measurement on db, of dialect d, and prints the table
// to w; path, if not empty, is the database file for the header.
func benchOn(ctx context.Context, w io.Writer, db *sql.DB, d dialect.Dialect, path string, o benchOptions) (rep benchReport, err error) {
	// Fresh tables under random prefixes, dropped afterwards, so that a
	// bench never touches other data in the database. A table left behind
	// on a shared server is worth an error naming it.
	o.Rounds = max(o.Rounds, 1)
	tag := randomTag()
	pPrefix, bPrefix := "bench_"+tag+"_", "base_"+tag+"_"
	rep = benchReport{Dialect: d.Name(), Path: path, Prefixes: [2]string{pPrefix, bPrefix}}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
		defer cancel()
		for _, prefix := range rep.Prefixes {
			if derr := migrations.Drop(dctx, db, d, prefix); derr != nil {
				err = errors.Join(err, fmt.Errorf("bench: drop tables %s*: %w", prefix, derr))
			}
		}
		if derr := dropMinimal(dctx, db, d, bPrefix); derr != nil {
			err = errors.Join(err, fmt.Errorf("bench: drop table %s: %w", minimalTable(bPrefix), derr))
		}
	}()
	st, err := core.Open(ctx, db, d, core.Options{Prefix: pPrefix, Migrate: true})
	if err != nil {
		return rep, fmt.Errorf("bench: %w", err)
	}
	counted := &stmtCounter{}
	pc, err := core.Open(ctx, db, countingDialectOf(d, counted), core.Options{Prefix: pPrefix})
	if err != nil {
		return rep, fmt.Errorf("bench: %w", err)
	}
	if _, err := migrations.Apply(ctx, db, d, bPrefix); err != nil {
		return rep, fmt.Errorf("bench: baseline tables: %w", err)
	}
	b := newBaseline(db, d, migrations.NamesFor(bPrefix), o.Batch, bareShape{})
	defer b.close()
	if o.Shape != "" {
		if b.shape, err = shapeNamed(b, o.Shape); err != nil {
			return rep, err
		}
	}
	sd := sides{st: pc, counted: counted, b: b}
	var minimalDDL []string
	if !o.Scale.NoTable {
		m, ddl, ok, err := newMinimal(ctx, db, d, bPrefix, o.Batch)
		if err != nil {
			return rep, fmt.Errorf("bench: %w", err)
		}
		if ok {
			defer m.close()
			sd.min, minimalDDL = m, ddl
		}
	}

	if path != "" {
		fmt.Fprintf(w, "Plenum bench on %s: %s\n", d.Name(), path)
	} else {
		fmt.Fprintf(w, "Plenum bench on %s\n", d.Name())
	}
	fmt.Fprintln(w, benchSettings(ctx, db, d))
	if o.Ceiling > 0 {
		c, err := measureCeiling(ctx, db, d, bPrefix, o.Workers, o.Ceiling)
		if err != nil {
			return rep, fmt.Errorf("bench: %w", err)
		}
		rep.Ceiling = &c
		fmt.Fprintln(w, ceilingLine(c, o.Batch))
	}
	fmt.Fprintf(w, "%s items per measurement, batches of %d, %s, %s; Plenum and a bare-SQL baseline on the same database\n",
		cmdline.Commas(o.Items), o.Batch, cmdline.Plural(o.Workers, "worker"), cmdline.Plural(o.Rounds, "round"))
	fmt.Fprintf(w, "tables %s* (Plenum) and %s* (bare SQL), dropped afterwards\n", pPrefix, bPrefix)
	if sd.min != nil {
		fmt.Fprintf(w, "minimal table (row %q: the claim+complete baseline's loop on a table with only what it needs):\n", minimalRow)
		for _, q := range minimalDDL {
			fmt.Fprintf(w, "  %s\n", q)
		}
	}

	// Each side starts with the database settled (for SQLite an empty
	// write-ahead log), so that neither pays for the other's leftovers.
	// On PostgreSQL both sides' tables are vacuumed too (settleFor, the
	// registration's Settle).
	pNames, bNames := migrations.NamesFor(pPrefix), migrations.NamesFor(bPrefix)
	checkpoint := checkpointFor(d)
	settled := []string{pNames.Items, pNames.Barriers, bNames.Items, bNames.Barriers}
	if sd.min != nil {
		settled = append(settled, sd.min.names.Items)
	}
	maintain := settleFor(d, settled...)
	if maintain != nil {
		fmt.Fprintln(w, "before each side: both sides' items and barriers settled as the database's maintenance would (the dialect's Settle: VACUUM (ANALYZE) on PostgreSQL)")
	}
	settle := func() error {
		if checkpoint != nil {
			if err := checkpoint(ctx, db); err != nil {
				return err
			}
		}
		if maintain != nil {
			return maintain(ctx, db)
		}
		return nil
	}
	if o.Shapes {
		if err := measureShapes(ctx, w, &rep, b, o, settle); err != nil {
			return rep, err
		}
	}
	fmt.Fprintf(w, "bare SQL: %s (%s)\n\n", b.shape.name, shapeAbout(b.shape))
	rep.Shape = b.shape.name

	if !o.Scale.NoTable {
		if err := measureRows(ctx, w, &rep, sd, o, settle); err != nil {
			return rep, err
		}
	}
	if err := runScale(ctx, w, &rep, sd, o, settle); err != nil {
		return rep, err
	}
	if o.Flow {
		if err := runFlow(ctx, w, &rep, sd, o, settle); err != nil {
			return rep, err
		}
	}
	if o.Steady.Enabled {
		if err := runSteadyBench(ctx, w, &rep, st, o, settle); err != nil {
			return rep, err
		}
	}
	rep.TxRetries, rep.BaseRetries = st.Stats().Retries+pc.Stats().Retries, b.retries.Load()
	if sd.min != nil {
		rep.BaseRetries += sd.min.retries.Load()
	}
	fmt.Fprintf(w, "transactions retried: Plenum %s, bare SQL %s\n", cmdline.Commas(rep.TxRetries), cmdline.Commas(rep.BaseRetries))
	if o.Pickups > 0 && !o.Scale.NoTable {
		if rep.Latency, err = benchLatency(ctx, w, st, o.Pickups); err != nil {
			return rep, err
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "Timings vary between runs and machines: this is a measurement, not a test.")
	return rep, nil
}

// shapeAbout says how a shape runs its statements.
func shapeAbout(s bareShape) string {
	switch {
	case s.begin != "":
		return "each worker on a connection of its own, " + s.begin + ", statements prepared on it once"
	case s.prepared:
		return "statements prepared once per connection"
	}
	return "statements as the driver runs them"
}

// measureShapes measures claim+complete with each of b's shapes, in the
// order they are listed and then once more in reverse, and keeps the
// fastest for the rest of the run.
func measureShapes(ctx context.Context, w io.Writer, rep *benchReport, b *baseline, o benchOptions, settle func() error) error {
	shapes := shapesFor(b)
	took := make([]time.Duration, len(shapes))
	order := make([]int, 0, 2*len(shapes))
	for i := range shapes {
		order = append(order, i)
	}
	for i := range shapes {
		order = append(order, len(shapes)-1-i)
	}
	keep := b.shape
	defer func() { b.shape = keep }()
	for n, i := range order {
		queue := fmt.Sprintf("bench.shape.%d", n)
		if err := b.enqueue(ctx, queue, o.Items, uuid.Nil); err != nil {
			return fmt.Errorf("bench: shapes: %w", err)
		}
		if err := settle(); err != nil {
			return fmt.Errorf("bench: checkpoint: %w", err)
		}
		b.shape = shapes[i]
		start := time.Now()
		if err := b.drain(ctx, queue, o.Workers, nil); err != nil {
			return fmt.Errorf("bench: shape %s: %w", shapes[i].name, err)
		}
		took[i] += time.Since(start)
	}
	fmt.Fprintf(w, "\nbare SQL shapes, claim+complete, each measured twice (in order, then in reverse):\n")
	best := 0
	for i, s := range shapes {
		rate := float64(2*o.Items) / max(took[i], time.Microsecond).Seconds()
		rep.Shapes = append(rep.Shapes, shapeRate{Name: s.name, Rate: rate})
		fmt.Fprintf(w, "  %-22s %12s/s\n", s.name, cmdline.Commas(int64(rate)))
		if took[i] < took[best] {
			best = i
		}
	}
	keep = shapes[best]
	if o.Shape != "" {
		keep = b.shape
	}
	return nil
}

// rowAcc gathers one row's measurements over the rounds.
type rowAcc struct {
	name         string
	items        int
	pTook, bTook time.Duration
	pc, bc       counts
	// pCPU and bCPU are the CPU time the process used while each side ran
	// (for SQLite, the database's too).
	pCPU, bCPU time.Duration
}

// measureRows measures the table's rows, o.Rounds times each, and prints
// the table.
func measureRows(ctx context.Context, w io.Writer, rep *benchReport, sd sides, o benchOptions, settle func() error) error {
	st, b := sd.st, sd.b
	accs := map[string]*rowAcc{}
	var names []string
	// pair measures one round of a row, the side that goes first
	// alternating with the round.
	pair := func(round int, name string, bc *stmtCounter, plenum, base func(context.Context) error) error {
		a := accs[name]
		if a == nil {
			a = &rowAcc{name: name}
			accs[name] = a
			names = append(names, name)
		}
		var pTook, bTook time.Duration
		side := func(plenumSide bool) error {
			if err := settle(); err != nil {
				return fmt.Errorf("bench: checkpoint: %w", err)
			}
			if plenumSide {
				before, cpu := sd.counted.snapshot(), processCPU()
				took, err := timedRun(ctx, plenum)
				if err != nil {
					return fmt.Errorf("bench: %s (plenum): %w", name, err)
				}
				a.pCPU += processCPU() - cpu
				a.pTook, pTook = a.pTook+took, took
				a.pc = a.pc.plus(sd.counted.snapshot().since(before))
				return nil
			}
			before, cpu := bc.snapshot(), processCPU()
			took, err := timedRun(ctx, base)
			if err != nil {
				return fmt.Errorf("bench: %s (baseline): %w", name, err)
			}
			a.bCPU += processCPU() - cpu
			a.bTook, bTook = a.bTook+took, took
			a.bc = a.bc.plus(bc.snapshot().since(before))
			return nil
		}
		first := round%2 == 0
		if err := side(first); err != nil {
			return err
		}
		if err := side(!first); err != nil {
			return err
		}
		a.items += o.Items
		if o.Rounds > 1 {
			p, q := perSecond(o.Items, pTook), perSecond(o.Items, bTook)
			fmt.Fprintf(w, "  round %d, %s: plenum %s/s, bare SQL %s/s, ratio %.2f\n", round+1, name, cmdline.Commas(int64(p)), cmdline.Commas(int64(q)), p/q)
		}
		return nil
	}
	for round := range o.Rounds {
		queue := fmt.Sprintf("bench.%d", round)
		err := pair(round, "enqueue", &b.count,
			func(ctx context.Context) error { return plenumEnqueue(ctx, st, queue, o.Items) },
			func(ctx context.Context) error { return b.enqueue(ctx, queue, o.Items, uuid.Nil) })
		if err != nil {
			return err
		}
		if o.SQL && round == 0 {
			sd.counted.record()
			b.count.record()
		}
		err = pair(round, "claim+complete", &b.count,
			func(ctx context.Context) error { return plenumDrain(ctx, st, queue, o) },
			func(ctx context.Context) error { return b.drain(ctx, queue, o.Workers, nil) })
		if err != nil {
			return err
		}
		if o.SQL && round == 0 {
			printSQL(w, "claim+complete", sd.counted.recorded(), b.count.recorded())
		}
		if err := checkDrained(ctx, st, b, queue, o.Items); err != nil {
			return fmt.Errorf("bench: claim+complete: %w", err)
		}

		// Fan-in: the children exist before the clock starts on both
		// sides; what is measured is claiming and completing them,
		// arrivals counted.
		fanQueue := queue + ".fanin"
		barrier, err := plenumFanOut(ctx, st, fanQueue, o.Items, nil)
		if err != nil {
			return fmt.Errorf("bench: fan-in setup (plenum): %w", err)
		}
		bb, err := b.fanOut(ctx, fanQueue, o.Items)
		if err != nil {
			return fmt.Errorf("bench: fan-in setup (baseline): %w", err)
		}
		if o.SQL && round == 0 {
			sd.counted.record()
			b.count.record()
		}
		err = pair(round, "fan-in arrivals", &b.count,
			func(ctx context.Context) error { return plenumDrain(ctx, st, fanQueue, o) },
			func(ctx context.Context) error { return b.drain(ctx, fanQueue, o.Workers, bb) })
		if err != nil {
			return err
		}
		if o.SQL && round == 0 {
			printSQL(w, "fan-in arrivals", sd.counted.recorded(), b.count.recorded())
		}
		if err := checkFired(ctx, st, b, barrier, bb, o.Items); err != nil {
			return fmt.Errorf("bench: fan-in: %w", err)
		}

		// The runtime: the same claim+complete through package worker,
		// with no-op handlers; the items exist before the clock starts.
		rtQueue := queue + ".runtime"
		if err := plenumEnqueue(ctx, st, rtQueue, o.Items); err != nil {
			return fmt.Errorf("bench: runtime setup (plenum): %w", err)
		}
		if err := b.enqueue(ctx, rtQueue, o.Items, uuid.Nil); err != nil {
			return fmt.Errorf("bench: runtime setup (baseline): %w", err)
		}
		err = pair(round, "runtime", &b.count,
			func(ctx context.Context) error { return runtimeDrain(ctx, st, rtQueue, o.Items, o) },
			func(ctx context.Context) error { return b.drain(ctx, rtQueue, o.Workers, nil) })
		if err != nil {
			return err
		}
		if err := checkDrained(ctx, st, b, rtQueue, o.Items); err != nil {
			return fmt.Errorf("bench: runtime: %w", err)
		}

		// Plenum's claim+complete again, against the same bare loop on
		// the minimal table: what Plenum's tables cost. Last in the
		// round, so that the rows above run as they did without it.
		if m := sd.min; m != nil {
			minQueue := queue + ".minimal"
			if err := plenumEnqueue(ctx, st, minQueue, o.Items); err != nil {
				return fmt.Errorf("bench: %s setup (plenum): %w", minimalRow, err)
			}
			if err := m.enqueueMinimal(ctx, minQueue, o.Items); err != nil {
				return fmt.Errorf("bench: %s setup (baseline): %w", minimalRow, err)
			}
			if o.SQL && round == 0 {
				sd.counted.record()
				m.count.record()
			}
			err = pair(round, minimalRow, &m.count,
				func(ctx context.Context) error { return plenumDrain(ctx, st, minQueue, o) },
				func(ctx context.Context) error { return m.drain(ctx, minQueue, o.Workers, nil) })
			if err != nil {
				return err
			}
			if o.SQL && round == 0 {
				printSQL(w, minimalRow, sd.counted.recorded(), m.count.recorded())
			}
			if counts, err := st.Counts(ctx, minQueue); err != nil {
				return fmt.Errorf("bench: %s: %w", minimalRow, err)
			} else if counts[core.StateCompleted] != int64(o.Items) || len(counts) != 1 {
				return fmt.Errorf("bench: %s: plenum left states %v, want %d completed", minimalRow, counts, o.Items)
			}
			if done, err := m.countMinimal(ctx, minQueue); err != nil {
				return fmt.Errorf("bench: %s: %w", minimalRow, err)
			} else if done != int64(o.Items) {
				return fmt.Errorf("bench: %s: the minimal table completed %d items, want %d", minimalRow, done, o.Items)
			}
		}
	}

	fmt.Fprintf(w, "\n  %-16s %14s %14s %10s\n", "", "plenum", "bare SQL", "ratio")
	for _, name := range names {
		a := accs[name]
		row := benchRow{Name: name, Items: a.items, PlenumCounts: a.pc, BaseCounts: a.bc, PlenumCPU: a.pCPU, BaseCPU: a.bCPU,
			Plenum: perSecond(a.items, a.pTook), Baseline: perSecond(a.items, a.bTook)}
		rep.Rows = append(rep.Rows, row)
		fmt.Fprintf(w, "  %-16s %12s/s %12s/s %10.2f\n", name, cmdline.Commas(int64(row.Plenum)), cmdline.Commas(int64(row.Baseline)), row.Ratio())
	}
	fmt.Fprintf(w, "ratio = plenum / bare SQL (above 1: Plenum is faster)\n")
	if sd.min != nil {
		fmt.Fprintf(w, "%s: Plenum's claim+complete against the claim+complete baseline's loop on the minimal table (above)\n", minimalRow)
	}
	for _, r := range rep.Rows {
		fmt.Fprintf(w, "statements per item, %s: plenum %s, bare SQL %s\n", r.Name, perItem(r.PlenumCounts, r.Items), perItem(r.BaseCounts, r.Items))
	}
	for _, r := range rep.Rows {
		fmt.Fprintf(w, "client CPU per item, %s: plenum %s, bare SQL %s\n", r.Name, cpuPerItem(r.PlenumCPU, r.Items), cpuPerItem(r.BaseCPU, r.Items))
	}
	return nil
}

// perSecond is n over took.
func perSecond(n int, took time.Duration) float64 {
	return float64(n) / max(took, time.Microsecond).Seconds()
}

func (c counts) plus(o counts) counts { return counts{c.stmts + o.stmts, c.txs + o.txs} }

// perItem formats statements and transactions per item.
func perItem(c counts, items int) string {
	if items == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f (%.3f transactions)", float64(c.stmts)/float64(items), float64(c.txs)/float64(items))
}

// cpuPerItem formats CPU time per item in microseconds.
func cpuPerItem(d time.Duration, items int) string {
	if items == 0 || d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f µs", float64(d)/float64(time.Microsecond)/float64(items))
}

// timedRun runs f and returns the time it took.
func timedRun(ctx context.Context, f func(context.Context) error) (time.Duration, error) {
	start := time.Now()
	if err := f(ctx); err != nil {
		return 0, err
	}
	return time.Since(start), nil
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
// barrier, leaving them for plenumDrain; expanding, if not nil, is called
// just before the expansion starts.
func plenumFanOut(ctx context.Context, st *core.Store, queue string, n int, expanding func()) (uuid.UUID, error) {
	owner, err := st.RegisterOwner(ctx, core.RegisterOwnerParams{})
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
	if expanding != nil {
		expanding()
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
		owner, err := st.RegisterOwner(ctx, core.RegisterOwnerParams{})
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
				return fmt.Errorf("%s lost claims with no reaper running", cmdline.Plural(len(lost), "completion"))
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

// checkDrained makes sure both sides really completed every item.
func checkDrained(ctx context.Context, st *core.Store, b *baseline, queue string, n int) error {
	return checkDrainedAfter(ctx, st, b, queue, n, 0)
}

// checkDrainedAfter makes sure both sides really completed n items of a
// queue that held already completed ones before.
func checkDrainedAfter(ctx context.Context, st *core.Store, b *baseline, queue string, n, already int) error {
	n += already
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
	var firedAt any // NULL until it fired, whatever each database's time type
	q := b.d.Rebind("SELECT arrived, fired_at FROM " + b.names.Barriers + " WHERE id = ?")
	if err := b.db.QueryRowContext(ctx, q, b.d.UUID(bb.id)).Scan(&arrived, &firedAt); err != nil {
		return err
	}
	if arrived != int64(n) || bb.fired.Load() != 1 || firedAt == nil {
		return fmt.Errorf("baseline barrier: arrived %d, fired %d times, fired_at %v; want %d, once, set", arrived, bb.fired.Load(), firedAt, n)
	}
	return nil
}
