package bench

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
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
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
	// Retention measures claim+complete again, in rounds with and
	// without the runtime's retention (Store.Purge) deleting old
	// completed items meanwhile.
	Retention bool
	// PurgeLimit and PurgePause are retention's pace: passes of
	// PurgeLimit items, PurgePause apart (the runtime's by default).
	PurgeLimit int
	PurgePause time.Duration
	// NoTable skips the table's rows (and the pickup latency): only what
	// the flags above and --flow ask for is measured.
	NoTable bool
}

func (s *scaleOptions) flags(fs *flag.FlagSet) {
	fs.IntVar(&s.FanOut, "fanout", 0, "fan out this many children of one barrier, against a bare multi-row INSERT, peak RSS printed (0: skip)")
	fs.IntVar(&s.Completed, "completed", 0, "then measure claim+complete again with this many completed items in both tables, plans shown (0: skip)")
	fs.BoolVar(&s.Retention, "retention", false, "then measure claim+complete again in rounds with and without retention (Store.Purge) deleting old completed items (needs --completed)")
	fs.IntVar(&s.PurgeLimit, "purge-limit", runtimePurgeLimit, "--retention: items per Store.Purge pass")
	fs.DurationVar(&s.PurgePause, "purge-pause", runtimePurgePause, "--retention: pause between Store.Purge passes")
	fs.BoolVar(&s.NoTable, "no-table", false, "measure only what --fanout, --completed, --retention, --flow and --steady ask for")
}

func (s scaleOptions) validate() error {
	switch {
	case s.FanOut < 0 || s.FanOut > 10_000_000:
		return cmdline.Usagef("--fanout %d: want 0 to 10,000,000", s.FanOut)
	case s.Completed < 0 || s.Completed > 100_000_000:
		return cmdline.Usagef("--completed %d: want 0 to 100,000,000", s.Completed)
	case s.Retention && s.Completed == 0:
		return cmdline.Usagef("--retention needs --completed: old completed items for retention to delete")
	case s.PurgeLimit < 0 || s.PurgeLimit > core.MaxClaimLimit:
		return cmdline.Usagef("--purge-limit %d: want 1 to %d", s.PurgeLimit, core.MaxClaimLimit)
	case s.PurgePause < 0:
		return cmdline.Usagef("--purge-pause %v: want 0 or more", s.PurgePause)
	}
	return nil
}

// scaleReport is what the measurements at scale found.
type scaleReport struct {
	// FanOut is Plenum's and the baseline's fan-out, children per
	// second, with the peak resident memory of each side.
	FanOut *fanOutRow
	// Full is claim+complete with Completed items in the tables; Empty
	// the same on a pair of empty tables, in rounds alternating with
	// Full's: the rates over all rounds.
	Empty, Full *benchRow
	// FlatRounds are the full / empty ratios of each round.
	FlatRounds []flatRound
	// Retained is Plenum's claim+complete over the rounds with retention
	// running, Unretained over those without; Purged the rate at which
	// retention deleted, over its passes' own time.
	Retained, Unretained float64
	Purged               float64
	RetentionSlows       float64
	// RetentionRounds are each round's rates.
	RetentionRounds []retentionRound
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
			cmdline.Commas(int64(s.FanOut)), cmdline.Commas(int64(row.Plenum)), cmdline.Commas(benchChunk), cmdline.Commas(int64(row.Baseline)), row.Plenum/row.Baseline)
		fmt.Fprintf(w, "peak RSS while fanning out %s children: plenum %s MiB, bare SQL %s MiB\n",
			cmdline.Commas(int64(s.FanOut)), mib(row.PlenumPeakRSS), mib(row.BasePeakRSS))
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

// plans prints the database's plan of each side's candidate read (the
// SELECT inside the claim: which index it walks) on queue.
func plans(ctx context.Context, w io.Writer, sd sides, queue, when string) {
	explain, ok := explainers[sd.b.d.Name()]
	if !ok {
		return
	}
	for _, t := range []struct{ side, table string }{{"plenum", migrations.NamesFor(sd.st.Prefix()).Items}, {"bare SQL", sd.b.names.Items}} {
		q := "SELECT id FROM " + t.table + " WHERE queue = '" + queue + "' AND state = 'available' AND flow_key IS NULL AND available_at <= " +
			sd.b.now + " ORDER BY priority, available_at, id LIMIT 100"
		plan, err := explain(ctx, sd.b, q)
		if err != nil {
			plan = "? (" + err.Error() + ")"
		}
		fmt.Fprintf(w, "  plan of the claim's read, %s, %s:\n    %s\n", t.side, when, strings.ReplaceAll(strings.TrimSpace(plan), "\n", "\n    "))
	}
}
