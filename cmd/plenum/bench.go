package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
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

const benchAbout = `
Measures Plenum's hot path on SQLite and, in the same run on the same
database, a bare-SQL baseline doing the same work without fencing:

  enqueue          Store.Enqueue      vs  multi-row INSERT
  claim+complete   Store.Claim and    vs  UPDATE ... WHERE id IN (SELECT ...
                   Store.CompleteMany     LIMIT n) RETURNING, then UPDATE ...
                                          SET state = 'completed' WHERE id IN (...)
  fan-in           children of one    vs  the same claims, then one transaction
                   barrier completed      per child that completes it and adds
                   in batches             1 to a counter row

The baseline runs on tables with the same columns and indexes (created
from the same schema under another prefix), and its writers take turns on
an in-process mutex, as Plenum's SQLite writers do, so that neither side
spends its time in SQLite's busy handler. Each table set is dropped
afterwards. This is a measurement, never a pass/fail on timing.`

// benchOptions configure a bench run.
type benchOptions struct {
	DB      string // database file; "" makes one in a new temporary directory
	Items   int
	Batch   int
	Workers int
}

func defaultBenchOptions() benchOptions {
	return benchOptions{Items: 20000, Batch: 100, Workers: 4}
}

func (o benchOptions) validate() error {
	switch {
	case o.Items < 1 || o.Items > 10_000_000:
		return usagef("--items %d: want 1 to 10,000,000", o.Items)
	case o.Batch < 1 || o.Batch > core.MaxClaimLimit:
		return usagef("--batch %d: want 1 to %d", o.Batch, core.MaxClaimLimit)
	case o.Workers < 1 || o.Workers > 256:
		return usagef("--workers %d: want 1 to 256", o.Workers)
	}
	return nil
}

func runBenchCmd(ctx context.Context, e env, args []string) error {
	o := defaultBenchOptions()
	fs := newFlags(e, "bench", "bench [flags]", benchAbout)
	fs.StringVar(&o.DB, "db", "", "SQLite database `file` to use (default: one in a new temporary directory)")
	fs.IntVar(&o.Items, "items", o.Items, "items per measurement")
	fs.IntVar(&o.Batch, "batch", o.Batch, "items claimed and completed per batch")
	fs.IntVar(&o.Workers, "workers", o.Workers, "concurrent workers")
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
	Path      string
	Rows      []benchRow
	TxRetries uint64
}

// runBench runs every measurement and prints the table to w.
func runBench(ctx context.Context, w io.Writer, o benchOptions) (benchReport, error) {
	if err := o.validate(); err != nil {
		return benchReport{}, err
	}
	db, path, closeDB, err := openScratch("bench", o.DB, false)
	if err != nil {
		return benchReport{}, err
	}
	defer closeDB()
	d := sqlite.Dialect()

	// Fresh tables under random prefixes, dropped afterwards, so that a
	// bench never touches other data in the file.
	tag := randomTag()
	pPrefix, bPrefix := "bench_"+tag+"_", "base_"+tag+"_"
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_ = migrations.Drop(dctx, db, d, pPrefix)
		_ = migrations.Drop(dctx, db, d, bPrefix)
	}()
	st, err := core.Open(ctx, db, d, core.Options{Prefix: pPrefix, Migrate: true})
	if err != nil {
		return benchReport{}, fmt.Errorf("bench: %w", err)
	}
	if _, err := migrations.Apply(ctx, db, d, bPrefix); err != nil {
		return benchReport{}, fmt.Errorf("bench: baseline tables: %w", err)
	}
	b := &baseline{db: db, now: d.Now(0), names: migrations.NamesFor(bPrefix), batch: o.Batch}

	fmt.Fprintf(w, "Plenum bench on SQLite: %s\n", path)
	fmt.Fprintf(w, "%s items per measurement, batches of %d, %s; Plenum and a bare-SQL baseline on the same database\n\n",
		commas(o.Items), o.Batch, plural(o.Workers, "worker"))
	fmt.Fprintf(w, "  %-16s %14s %14s %10s\n", "", "plenum", "bare SQL", "ratio")

	rep := benchReport{Path: path}
	// Each side starts with an empty write-ahead log, so that neither pays
	// for the other's checkpoint.
	checkpoint := func() error {
		_, err := db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
		return err
	}
	measure := func(name string, plenum, base func(context.Context) error) error {
		if err := checkpoint(); err != nil {
			return fmt.Errorf("bench: checkpoint: %w", err)
		}
		p, err := timed(ctx, o.Items, plenum)
		if err != nil {
			return fmt.Errorf("bench: %s (plenum): %w", name, err)
		}
		if err := checkpoint(); err != nil {
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
		func(ctx context.Context) error { return b.enqueue(ctx, queue, o.Items, nil) })
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
	rep.TxRetries = st.Stats().Retries
	fmt.Fprintf(w, "\nratio = plenum / bare SQL (above 1: Plenum is faster). Plenum transaction retries: %s.\n", commas(rep.TxRetries))
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
// the same shape: no claim tokens checked, no owners, no fences.
type baseline struct {
	db    *sql.DB
	now   string // the same clock expression, so times are stored alike
	names migrations.Names
	batch int
	// writer serializes the baseline's write transactions, as the sqlite
	// dialect's writer queue does for Plenum: without it, concurrent
	// writers would wait in SQLite's busy handler, whose sleeps would make
	// the baseline look slower than it is.
	writer sync.Mutex
}

// baseBarrier is the baseline's fan-in: a counter row and its children.
type baseBarrier struct {
	id    uuid.UUID
	fired atomic.Int64
}

func (b *baseline) enqueue(ctx context.Context, queue string, n int, barrier *uuid.UUID) error {
	const row = "(?, ?, 'bench', NULL, ?, 0, 'available', %[1]s, 0, 20, 0, ?, %[1]s)"
	for i := 0; i < n; i += benchChunk {
		end := min(i+benchChunk, n)
		var q strings.Builder
		q.WriteString("INSERT INTO " + b.names.Items + " (id, queue, kind, unique_key, payload, priority, state, available_at, attempt, max_attempts, crash_count, barrier_id, created_at) VALUES ")
		args := make([]any, 0, 4*(end-i))
		for j := i; j < end; j++ {
			if j > i {
				q.WriteString(", ")
			}
			fmt.Fprintf(&q, row, b.now)
			var bar any
			if barrier != nil {
				bar = barrier[:]
			}
			id := uuid.Must(uuid.NewV7())
			args = append(args, id[:], queue, fmt.Sprintf(`{"n":%d}`, j), bar)
		}
		err := b.tx(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, q.String(), args...)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// tx runs f in a write transaction, one at a time. The DSN's
// _txlock=immediate makes BeginTx issue BEGIN IMMEDIATE.
func (b *baseline) tx(ctx context.Context, f func(*sql.Tx) error) error {
	b.writer.Lock()
	defer b.writer.Unlock()
	tx, err := b.db.BeginTx(ctx, nil)
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
	err := b.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO "+b.names.Barriers+" (id, owner_id, name, expected, arrived, failed, sealed, join_queue, join_kind, join_priority, join_max_attempts, on_child_failure, created_at) "+
			"VALUES (?, ?, 'bench', ?, 0, 0, 1, ?, 'join', 0, 20, 'join', "+b.now+")", bb.id[:], owner[:], n, queue+".join")
		return err
	})
	if err != nil {
		return nil, err
	}
	return bb, b.enqueue(ctx, queue, n, &bb.id)
}

// drain claims and completes everything in queue with n workers. With a
// barrier, each child is completed in its own transaction that also adds
// one to the counter row and fires it when the count is complete.
func (b *baseline) drain(ctx context.Context, queue string, n int, bb *baseBarrier) error {
	claim := "UPDATE " + b.names.Items + " SET state = 'claimed', claimed_by = ?, claimed_at = " + b.now +
		", lease_expires_at = " + b.now + " + 3600000000, attempt = attempt + 1 WHERE id IN (SELECT id FROM " + b.names.Items +
		" WHERE queue = ? AND state = 'available' AND available_at <= " + b.now + " ORDER BY priority, available_at, id LIMIT ?)" +
		// What a worker needs to do the work; Plenum returns the whole item.
		" RETURNING id, kind, payload, attempt"
	return fanWorkers(ctx, n, func(ctx context.Context) error {
		worker := uuid.Must(uuid.NewV7())
		for {
			var ids [][]byte
			err := b.tx(ctx, func(tx *sql.Tx) error {
				rows, err := tx.QueryContext(ctx, claim, worker[:], queue, b.batch)
				if err != nil {
					return err
				}
				defer rows.Close()
				for rows.Next() {
					var (
						id, payload []byte
						kind        string
						attempt     int
					)
					if err := rows.Scan(&id, &kind, &payload, &attempt); err != nil {
						return err
					}
					ids = append(ids, id)
				}
				return rows.Err()
			})
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

func (b *baseline) completeMany(ctx context.Context, ids [][]byte) error {
	args := make([]any, 0, len(ids)+1)
	args = append(args, string(benchResult))
	for _, id := range ids {
		args = append(args, id)
	}
	return b.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "UPDATE "+b.names.Items+" SET state = 'completed', finished_at = "+b.now+
			", lease_expires_at = NULL, result = ? WHERE id IN ("+dialect.Placeholders(len(ids))+")", args...)
		return err
	})
}

// arriveEach is the per-child counter pattern: one transaction per child.
func (b *baseline) arriveEach(ctx context.Context, ids [][]byte, bb *baseBarrier) error {
	for _, id := range ids {
		err := b.tx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, "UPDATE "+b.names.Items+" SET state = 'completed', finished_at = "+b.now+
				", lease_expires_at = NULL, result = ? WHERE id = ?", string(benchResult), id); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, "UPDATE "+b.names.Barriers+" SET arrived = arrived + 1 WHERE id = ?", bb.id[:]); err != nil {
				return err
			}
			res, err := tx.ExecContext(ctx, "UPDATE "+b.names.Barriers+" SET fired_at = "+b.now+
				" WHERE id = ? AND fired_at IS NULL AND sealed = 1 AND arrived + failed = expected", bb.id[:])
			if err != nil {
				return err
			}
			if fired, err := res.RowsAffected(); err != nil {
				return err
			} else if fired == 1 {
				bb.fired.Add(1)
			}
			return nil
		})
		if err != nil {
			return err
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
	if err := b.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+b.names.Items+" WHERE queue = ? AND state = 'completed'", queue).Scan(&done); err != nil {
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
	if err := b.db.QueryRowContext(ctx, "SELECT arrived FROM "+b.names.Barriers+" WHERE id = ?", bb.id[:]).Scan(&arrived); err != nil {
		return err
	}
	if arrived != int64(n) || bb.fired.Load() != 1 {
		return fmt.Errorf("baseline barrier: arrived %d, fired %d times; want %d, once", arrived, bb.fired.Load(), n)
	}
	return nil
}
