package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
)

// scaleOptions are the measurements at scale, each behind its own flag so
// that a plain run stays a matter of minutes.
type scaleOptions struct {
	// FanOut is how many children of one barrier to fan out with
	// Store.Expand against a bare multi-row INSERT, peak RSS of each side
	// printed; 0 skips it.
	FanOut int
	// Completed is how many completed items to put in both sides' tables
	// before claim+complete is measured again against the empty-table
	// rate, the claim's plans shown; 0 skips it.
	Completed int
	// Retention measures claim+complete again while the runtime's
	// retention (Store.Purge) deletes old completed items.
	Retention bool
	// NoTable skips the table's rows (and the pickup latency): only what
	// the flags above ask for is measured.
	NoTable bool
}

func (s *scaleOptions) flags(fs *flag.FlagSet) {
	fs.IntVar(&s.FanOut, "fanout", 0, "fan out this many children of one barrier, against a bare multi-row INSERT, peak RSS printed (0: skip)")
	fs.IntVar(&s.Completed, "completed", 0, "then measure claim+complete again with this many completed items in both tables, plans shown (0: skip)")
	fs.BoolVar(&s.Retention, "retention", false, "then measure claim+complete again while retention (Store.Purge) deletes old completed items (needs --completed)")
	fs.BoolVar(&s.NoTable, "no-table", false, "measure only what --fanout, --completed and --retention ask for")
}

func (s scaleOptions) validate() error {
	switch {
	case s.FanOut < 0 || s.FanOut > 10_000_000:
		return usagef("--fanout %d: want 0 to 10,000,000", s.FanOut)
	case s.Completed < 0 || s.Completed > 100_000_000:
		return usagef("--completed %d: want 0 to 100,000,000", s.Completed)
	case s.Retention && s.Completed == 0:
		return usagef("--retention needs --completed: old completed items for retention to delete")
	}
	return nil
}

// scaleReport is what the measurements at scale found.
type scaleReport struct {
	// FanOut is Plenum's and the baseline's fan-out, children per
	// second, with the peak resident memory of each side.
	FanOut *fanOutRow
	// Full is claim+complete with Completed items in the tables; Empty
	// the same measured on empty tables in the same run.
	Empty, Full *benchRow
	// Retained is Plenum's claim+complete while retention ran, and
	// Purged the rate at which retention deleted.
	Retained       float64
	Purged         float64
	RetentionSlows float64
}

// fanOutRow is the fan-out at scale.
type fanOutRow struct {
	Children                   int
	Plenum, Baseline           float64
	PlenumPeakRSS, BasePeakRSS int64
}

// runScale runs the measurements at scale that o asks for.
func runScale(ctx context.Context, w io.Writer, rep *benchReport, sd sides, o benchOptions, settle func() error) error {
	s := o.Scale
	if s.FanOut > 0 {
		row, err := scaleFanOut(ctx, sd, s.FanOut, settle)
		if err != nil {
			return err
		}
		rep.Scale.FanOut = row
		fmt.Fprintf(w, "\nfan-out of %s children of one barrier: plenum %s/s (Store.Expand, pages of %s), bare SQL %s/s (multi-row INSERT of keyed rows, insert-or-ignore), ratio %.2f\n",
			commas(int64(s.FanOut)), commas(int64(row.Plenum)), commas(benchChunk), commas(int64(row.Baseline)), row.Plenum/row.Baseline)
		fmt.Fprintf(w, "peak RSS while fanning out %s children: plenum %s MiB, bare SQL %s MiB\n",
			commas(int64(s.FanOut)), mib(row.PlenumPeakRSS), mib(row.BasePeakRSS))
	}
	if s.Completed > 0 {
		if err := scaleCompleted(ctx, w, rep, sd, o, settle); err != nil {
			return err
		}
	}
	return nil
}

func mib(b int64) string {
	if b <= 0 {
		return "?"
	}
	return fmt.Sprintf("%.1f", float64(b)/(1<<20))
}

// scaleFanOut fans out n children of one barrier on each side, the clock
// running from before the parent's expansion to its end, the peak RSS of
// the process sampled while each side runs.
func scaleFanOut(ctx context.Context, sd sides, n int, settle func() error) (*fanOutRow, error) {
	row := &fanOutRow{Children: n}
	const queue = "bench.fanout"
	if err := settle(); err != nil {
		return nil, err
	}
	var (
		took    time.Duration
		barrier uuid.UUID
		bb      *baseBarrier
	)
	peak, err := peakRSS(func() error {
		var start time.Time
		var err error
		barrier, err = plenumFanOut(ctx, sd.st, queue, n, func() { start = time.Now() })
		took = time.Since(start)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("bench: fan-out (plenum): %w", err)
	}
	row.Plenum, row.PlenumPeakRSS = perSecond(n, took), peak
	if err := settle(); err != nil {
		return nil, err
	}
	peak, err = peakRSS(func() error {
		start := time.Now()
		var err error
		bb, err = sd.b.fanOut(ctx, queue, n)
		took = time.Since(start)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("bench: fan-out (baseline): %w", err)
	}
	row.Baseline, row.BasePeakRSS = perSecond(n, took), peak
	return row, checkFannedOut(ctx, sd, barrier, bb, n)
}

// checkFannedOut makes sure both sides really created n children of their
// barrier.
func checkFannedOut(ctx context.Context, sd sides, barrier uuid.UUID, bb *baseBarrier, n int) error {
	got, err := sd.st.GetBarrier(ctx, barrier)
	if err != nil {
		return err
	}
	if got.Expected != int64(n) {
		return fmt.Errorf("bench: fan-out: plenum's barrier expects %d children, want %d", got.Expected, n)
	}
	var kids int64
	q := sd.b.d.Rebind("SELECT COUNT(*) FROM " + sd.b.names.Items + " WHERE barrier_id = ?")
	if err := sd.b.db.QueryRowContext(ctx, q, sd.b.d.UUID(bb.id)).Scan(&kids); err != nil {
		return err
	}
	if kids != int64(n) {
		return fmt.Errorf("bench: fan-out: the baseline inserted %d children, want %d", kids, n)
	}
	return nil
}

// peakRSS runs f and returns the most resident memory the process had
// while it ran, sampled every few milliseconds (0 where the system does
// not say).
func peakRSS(f func() error) (int64, error) {
	var peak atomic.Int64
	peak.Store(residentBytes())
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if r := residentBytes(); r > peak.Load() {
					peak.Store(r)
				}
			}
		}
	})
	err := f()
	close(done)
	wg.Wait()
	if r := residentBytes(); r > peak.Load() {
		peak.Store(r)
	}
	return peak.Load(), err
}

// scaleCompleted measures claim+complete on empty tables, fills both
// sides' tables with o.Scale.Completed completed items of the claimed
// queue, shows the claim's plans, and measures again; with --retention,
// once more while Store.Purge deletes the old items.
func scaleCompleted(ctx context.Context, w io.Writer, rep *benchReport, sd sides, o benchOptions, settle func() error) error {
	n := o.Scale.Completed
	filler, ok := fillers[sd.b.d.Name()]
	if !ok {
		return usagef("--completed: no fast way to fill %s tables is known (postgres and sqlite have one)", sd.b.d.Name())
	}
	const queue = "bench.flat"
	drainPairOf := func(o benchOptions, name string, round, already int) (*benchRow, error) {
		q := fmt.Sprintf("%s.%d", queue, round)
		if err := plenumEnqueue(ctx, sd.st, q, o.Items); err != nil {
			return nil, err
		}
		if err := sd.b.enqueue(ctx, q, o.Items, uuid.Nil); err != nil {
			return nil, err
		}
		row := &benchRow{Name: name, Items: o.Items}
		if err := settle(); err != nil {
			return nil, err
		}
		took, err := timedRun(ctx, func(ctx context.Context) error { return plenumDrain(ctx, sd.st, q, o) })
		if err != nil {
			return nil, fmt.Errorf("bench: %s (plenum): %w", name, err)
		}
		row.Plenum = perSecond(o.Items, took)
		if err := settle(); err != nil {
			return nil, err
		}
		took, err = timedRun(ctx, func(ctx context.Context) error { return sd.b.drain(ctx, q, o.Workers, nil) })
		if err != nil {
			return nil, fmt.Errorf("bench: %s (baseline): %w", name, err)
		}
		row.Baseline = perSecond(o.Items, took)
		return row, checkDrainedAfter(ctx, sd.st, sd.b, q, o.Items, already)
	}
	drainPair := func(name string, round, already int) (*benchRow, error) {
		return drainPairOf(o, name, round, already)
	}
	// A first drain on each side, unmeasured, so that the empty-table
	// rate does not pay for opening connections and preparing
	// statements that the full-table rate finds ready.
	warm := o
	warm.Items = max(o.Items/10, o.Batch)
	if _, err := drainPairOf(warm, "warm-up", -1, 0); err != nil {
		return err
	}
	empty, err := drainPair("claim+complete, empty tables", 0, 0)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nclaim+complete as tables grow (%s items, the same queue as the %s completed ones):\n", commas(int64(o.Items)), commas(int64(n)))
	fmt.Fprintf(w, "  %-36s %12s/s %12s/s %8.2f\n", empty.Name, commas(int64(empty.Plenum)), commas(int64(empty.Baseline)), empty.Ratio())
	plans(ctx, w, sd, queue+".1", "empty tables")
	start := time.Now()
	for _, t := range []string{migrations.NamesFor(sd.st.Prefix()).Items, sd.b.names.Items} {
		if err := filler(ctx, sd.b, t, queue+".1", n); err != nil {
			return fmt.Errorf("bench: fill %s with %s completed items: %w", t, commas(int64(n)), err)
		}
	}
	fmt.Fprintf(w, "  (filled both tables with %s completed items each in %v)\n", commas(int64(n)), time.Since(start).Round(time.Second))
	plans(ctx, w, sd, queue+".1", commas(int64(n))+" completed items")
	full, err := drainPair(fmt.Sprintf("claim+complete, %s completed", shortCount(n)), 1, n)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "  %-36s %12s/s %12s/s %8.2f\n", full.Name, commas(int64(full.Plenum)), commas(int64(full.Baseline)), full.Ratio())
	fmt.Fprintf(w, "  full / empty: plenum %.2f, bare SQL %.2f\n", full.Plenum/empty.Plenum, full.Baseline/empty.Baseline)
	rep.Scale.Empty, rep.Scale.Full = empty, full
	if o.Scale.Retention {
		return scaleRetention(ctx, w, rep, sd, o, queue+".2", full.Plenum)
	}
	return nil
}

// shortCount writes 10000000 as 10M.
func shortCount(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1000 && n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return commas(int64(n))
}

// scaleRetention measures Plenum's claim+complete of queue while another
// goroutine purges old completed items as the runtime's retention does
// (Store.Purge passes of 1,000 until none are left or the claims end), and
// reports the slowdown against without.
func scaleRetention(ctx context.Context, w io.Writer, rep *benchReport, sd sides, o benchOptions, queue string, without float64) error {
	if err := plenumEnqueue(ctx, sd.st, queue, o.Items); err != nil {
		return err
	}
	// Passes run to their end: the last one may outlast the claims a
	// little, and the deletion rate is over the passes' own time.
	var (
		stop      atomic.Bool
		purged    atomic.Int64
		purgeErr  error
		purgeTook time.Duration
		wg        sync.WaitGroup
	)
	wg.Go(func() {
		start := time.Now()
		defer func() { purgeTook = time.Since(start) }()
		for !stop.Load() {
			res, err := sd.st.Purge(ctx, core.PurgeParams{OlderThan: time.Hour, Limit: 1000})
			if err != nil {
				purgeErr = err
				return
			}
			purged.Add(int64(res.Items))
			if res.Items == 0 {
				return
			}
		}
	})
	took, err := timedRun(ctx, func(ctx context.Context) error { return plenumDrain(ctx, sd.st, queue, o) })
	stop.Store(true)
	wg.Wait()
	if err != nil {
		return fmt.Errorf("bench: claim+complete with retention: %w", err)
	}
	if purgeErr != nil {
		return fmt.Errorf("bench: retention: %w", purgeErr)
	}
	with := perSecond(o.Items, took)
	purgedRate := float64(purged.Load()) / max(purgeTook, time.Microsecond).Seconds()
	rep.Scale.Retained, rep.Scale.Purged, rep.Scale.RetentionSlows = with, purgedRate, 1-with/without
	fmt.Fprintf(w, "  plenum claim+complete with retention running: %s/s (%s/s without: %.0f%% slower); retention deleted %s items, %s/s\n",
		commas(int64(with)), commas(int64(without)), 100*(1-with/without), commas(purged.Load()), commas(int64(purgedRate)))
	return nil
}

// plans prints the database's plan of each side's candidate read (the
// SELECT inside the claim: which index it walks) on queue.
func plans(ctx context.Context, w io.Writer, sd sides, queue, when string) {
	explain, ok := explainers[sd.b.d.Name()]
	if !ok {
		return
	}
	for _, t := range []struct{ side, table string }{{"plenum", migrations.NamesFor(sd.st.Prefix()).Items}, {"bare SQL", sd.b.names.Items}} {
		q := "SELECT id FROM " + t.table + " WHERE queue = '" + queue + "' AND state = 'available' AND available_at <= " +
			sd.b.now + " ORDER BY priority, available_at, id LIMIT 100"
		plan, err := explain(ctx, sd.b, q)
		if err != nil {
			plan = "? (" + err.Error() + ")"
		}
		fmt.Fprintf(w, "  plan of the claim's read, %s, %s:\n    %s\n", t.side, when, strings.ReplaceAll(strings.TrimSpace(plan), "\n", "\n    "))
	}
}
