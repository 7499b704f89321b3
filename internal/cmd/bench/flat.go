package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
	"github.com/plenumdb/plenum/internal/steadystate"
	"github.com/plenumdb/plenum/migrations"
)

// Retention's pace in the runtime (worker's purgeLimit and purgePause),
// the defaults of --purge-limit and --purge-pause.
const (
	runtimePurgeLimit = 500
	runtimePurgePause = 20 * time.Millisecond
)

// flatRound is one round of claim+complete on the full tables and on the
// empty ones.
type flatRound struct {
	EmptyFirst                 bool
	Plenum, Baseline           [2]float64 // empty, full
	PlenumRatio, BaselineRatio float64    // full / empty
}

// retentionRound is one round of claim+complete without retention and
// with it.
type retentionRound struct {
	WithFirst     bool
	Without, With float64
	// Deleted items in PurgeTook, the passes' own time.
	Deleted   int64
	PurgeTook time.Duration
}

// Slows is how much slower claims ran with retention than without.
func (r retentionRound) Slows() float64 { return 1 - r.With/r.Without }

// flatQueue is the queue the completed items fill and claim+complete
// drains, on both pairs of tables.
const flatQueue = "bench.flat"

// emptySides opens a second pair of tables, Plenum's and the baseline's,
// that stay empty of old items, for the rounds that alternate with the
// full ones; drop removes them.
func emptySides(ctx context.Context, sd sides, o benchOptions) (e sides, drop func() error, err error) {
	tag := randomTag()
	pPrefix, bPrefix := "bench_"+tag+"_e_", "base_"+tag+"_e_"
	db, d := sd.b.db, sd.b.d
	drop = func() error {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Minute)
		defer cancel()
		var err error
		for _, prefix := range []string{pPrefix, bPrefix} {
			if derr := migrations.Drop(dctx, db, d, prefix); derr != nil {
				err = errors.Join(err, fmt.Errorf("bench: drop tables %s*: %w", prefix, derr))
			}
		}
		return err
	}
	counted := &stmtCounter{}
	if _, err := core.Open(ctx, db, d, core.Options{Prefix: pPrefix, Migrate: true}); err != nil {
		return e, drop, fmt.Errorf("bench: %w", err)
	}
	st, err := core.Open(ctx, db, countingDialectOf(d, counted), core.Options{Prefix: pPrefix})
	if err != nil {
		return e, drop, fmt.Errorf("bench: %w", err)
	}
	if _, err := migrations.Apply(ctx, db, d, bPrefix); err != nil {
		return e, drop, fmt.Errorf("bench: baseline tables: %w", err)
	}
	b := newBaseline(db, d, migrations.NamesFor(bPrefix), o.Batch, sd.b.shape)
	dropTables := drop
	return sides{st: st, counted: counted, b: b}, func() error { b.close(); return dropTables() }, nil
}

// scaleCompleted fills both sides' tables with o.Scale.Completed
// completed items of the claimed queue, shows the claim's plans, and
// measures claim+complete on them and on a fresh pair of empty tables in
// alternating rounds, so that the machine's load, which moves from minute
// to minute, weighs on both alike; with --retention, rounds with and
// without Store.Purge deleting the old items follow.
func scaleCompleted(ctx context.Context, w io.Writer, rep *benchReport, sd sides, o benchOptions, settle func() error) (err error) {
	n := o.Scale.Completed
	filler, ok := fillers[sd.b.d.Name()]
	if !ok {
		return cmdline.Usagef("--completed: no fast way to fill %s tables is known (postgres and sqlite have one)", sd.b.d.Name())
	}
	empty, drop, err := emptySides(ctx, sd, o)
	defer func() { err = errors.Join(err, drop()) }()
	if err != nil {
		return err
	}
	// The empty pair settles as the full one does, its tables maintained
	// before each side too: else the dead rows of its own earlier rounds
	// weigh on its later ones.
	en := migrations.NamesFor(empty.st.Prefix())
	if maintain := settleFor(sd.b.d, en.Items, en.Barriers, empty.b.names.Items, empty.b.names.Barriers); maintain != nil {
		full := settle
		settle = func() error {
			if err := full(); err != nil {
				return err
			}
			return maintain(ctx, sd.b.db)
		}
	}
	pairs := [2]sides{empty, sd}
	// A first drain on each side of each pair, unmeasured, so that no
	// round pays for opening connections and preparing statements.
	warm := o
	warm.Items = max(o.Items/10, o.Batch)
	for _, p := range pairs {
		if _, err := drainSide(ctx, p, warm, flatQueue+".warm", true, settle); err != nil {
			return err
		}
		if _, err := drainSide(ctx, p, warm, flatQueue+".warm", false, settle); err != nil {
			return err
		}
	}
	start := time.Now()
	for _, t := range []string{migrations.NamesFor(sd.st.Prefix()).Items, sd.b.names.Items} {
		if err := filler(ctx, sd.b, t, flatQueue, n); err != nil {
			return fmt.Errorf("bench: fill %s with %s completed items: %w", t, cmdline.Commas(int64(n)), err)
		}
	}
	fmt.Fprintf(w, "\nclaim+complete as tables grow (%s items a round, the same queue as the %s completed ones), %s alternating with a pair of empty tables:\n",
		cmdline.Commas(int64(o.Items)), cmdline.Commas(int64(n)), cmdline.Plural(o.Rounds, "round"))
	fmt.Fprintf(w, "  (filled both tables with %s completed items each in %v)\n", cmdline.Commas(int64(n)), time.Since(start).Round(time.Second))
	plans(ctx, w, empty, flatQueue, "empty tables")
	plans(ctx, w, sd, flatQueue, cmdline.Commas(int64(n))+" completed items")

	// acc[pair][side] sums the items and the time of every round.
	var acc [2][2]struct {
		took time.Duration
		row  benchRow
	}
	for r := range o.Rounds {
		order := []int{0, 1}
		if r%2 == 1 {
			order = []int{1, 0}
		}
		fr := flatRound{EmptyFirst: order[0] == 0}
		for side, plenum := range []bool{true, false} {
			for _, p := range order {
				already := r * o.Items
				if p == 1 {
					already += n
				}
				took, err := drainSide(ctx, pairs[p], o, flatQueue, plenum, settle)
				if err != nil {
					return err
				}
				if err := checkSideDrained(ctx, pairs[p], flatQueue, plenum, o.Items+already); err != nil {
					return fmt.Errorf("bench: round %d: %w", r+1, err)
				}
				acc[p][side].took += took
				rate := perSecond(o.Items, took)
				if plenum {
					fr.Plenum[p] = rate
				} else {
					fr.Baseline[p] = rate
				}
			}
		}
		fr.PlenumRatio, fr.BaselineRatio = fr.Plenum[1]/fr.Plenum[0], fr.Baseline[1]/fr.Baseline[0]
		rep.Scale.FlatRounds = append(rep.Scale.FlatRounds, fr)
		first := "full"
		if fr.EmptyFirst {
			first = "empty"
		}
		fmt.Fprintf(w, "  round %d (%s first): plenum %s/s empty, %s/s full: %.2f; bare SQL %s/s empty, %s/s full: %.2f\n",
			r+1, first, cmdline.Commas(int64(fr.Plenum[0])), cmdline.Commas(int64(fr.Plenum[1])), fr.PlenumRatio,
			cmdline.Commas(int64(fr.Baseline[0])), cmdline.Commas(int64(fr.Baseline[1])), fr.BaselineRatio)
	}
	items := o.Rounds * o.Items
	rows := [2]*benchRow{
		{Name: "claim+complete, empty tables", Items: items, Plenum: perSecond(items, acc[0][0].took), Baseline: perSecond(items, acc[0][1].took)},
		{Name: fmt.Sprintf("claim+complete, %s completed", cmdline.Commas(int64(n))), Items: items, Plenum: perSecond(items, acc[1][0].took), Baseline: perSecond(items, acc[1][1].took)},
	}
	for _, row := range rows {
		fmt.Fprintf(w, "  %-36s %12s/s %12s/s %8.2f\n", row.Name, cmdline.Commas(int64(row.Plenum)), cmdline.Commas(int64(row.Baseline)), row.Ratio())
	}
	var pr, br []float64
	for _, fr := range rep.Scale.FlatRounds {
		pr, br = append(pr, fr.PlenumRatio), append(br, fr.BaselineRatio)
	}
	fmt.Fprintf(w, "  full / empty, over all rounds: plenum %.2f, bare SQL %.2f; median of the rounds: plenum %.2f, bare SQL %.2f\n",
		rows[1].Plenum/rows[0].Plenum, rows[1].Baseline/rows[0].Baseline, median(pr), median(br))
	rep.Scale.Empty, rep.Scale.Full = rows[0], rows[1]
	if o.Scale.Retention {
		return scaleRetention(ctx, w, rep, sd, o, settle)
	}
	return nil
}

// drainSide enqueues o.Items items of queue on one side of a pair (Plenum's
// or the baseline's) and returns how long claim+complete took to drain
// them.
func drainSide(ctx context.Context, p sides, o benchOptions, queue string, plenum bool, settle func() error) (time.Duration, error) {
	var err error
	if plenum {
		err = plenumEnqueue(ctx, p.st, queue, o.Items)
	} else {
		err = p.b.enqueue(ctx, queue, o.Items, uuid.Nil)
	}
	if err != nil {
		return 0, err
	}
	if err := settle(); err != nil {
		return 0, err
	}
	if plenum {
		took, err := timedRun(ctx, func(ctx context.Context) error { return plenumDrain(ctx, p.st, queue, o) })
		if err != nil {
			return 0, fmt.Errorf("bench: claim+complete (plenum): %w", err)
		}
		return took, nil
	}
	took, err := timedRun(ctx, func(ctx context.Context) error { return p.b.drain(ctx, queue, o.Workers, nil) })
	if err != nil {
		return 0, fmt.Errorf("bench: claim+complete (baseline): %w", err)
	}
	return took, nil
}

// checkSideDrained makes sure one side's queue holds n completed items and
// nothing else.
func checkSideDrained(ctx context.Context, p sides, queue string, plenum bool, n int) error {
	if plenum {
		counts, err := p.st.Counts(ctx, queue)
		if err != nil {
			return err
		}
		if counts[core.StateCompleted] != int64(n) || len(counts) != 1 {
			return fmt.Errorf("plenum left states %v, want %d completed", counts, n)
		}
		return nil
	}
	var done int64
	q := p.b.d.Rebind("SELECT COUNT(*) FROM " + p.b.names.Items + " WHERE queue = ? AND state = 'completed'")
	if err := p.b.db.QueryRowContext(ctx, q, queue).Scan(&done); err != nil {
		return err
	}
	if done != int64(n) {
		return fmt.Errorf("baseline completed %d items, want %d", done, n)
	}
	return nil
}

// scaleRetention measures Plenum's claim+complete on the full tables in
// rounds alternately without and with retention running meanwhile:
// Store.Purge passes at the runtime's pace (--purge-limit items,
// --purge-pause apart) until the claims end or nothing old is left. It
// prints each round's slowdown, the slowdown over all rounds, and the
// rate of deletion over the passes' own time.
func scaleRetention(ctx context.Context, w io.Writer, rep *benchReport, sd sides, o benchOptions, settle func() error) error {
	limit, pause := o.Scale.PurgeLimit, o.Scale.PurgePause
	if limit == 0 {
		limit = runtimePurgeLimit
	}
	// Its own queue, so that what retention deletes of the filled queue
	// does not count against the drain's check.
	const queue = flatQueue + ".retained"
	fmt.Fprintf(w, "\nclaim+complete with retention (Store.Purge passes of %s, %v apart) deleting the old items, %s alternating with none:\n",
		cmdline.Commas(int64(limit)), pause, cmdline.Plural(o.Rounds, "round"))
	var (
		withTook, withoutTook, purgeTook time.Duration
		deleted                          int64
		drained                          int
	)
	for r := range o.Rounds {
		rr := retentionRound{WithFirst: r%2 == 1}
		for _, with := range []bool{rr.WithFirst, !rr.WithFirst} {
			var (
				took time.Duration
				err  error
				ran  purgeRun
			)
			if with {
				took, ran, err = drainPurging(ctx, sd, o, queue, limit, pause, settle)
			} else {
				took, err = drainSide(ctx, sd, o, queue, true, settle)
			}
			if err != nil {
				return err
			}
			drained += o.Items
			if err := checkSideDrained(ctx, sd, queue, true, drained); err != nil {
				return fmt.Errorf("bench: retention round %d: %w", r+1, err)
			}
			if with {
				rr.With, rr.Deleted, rr.PurgeTook = perSecond(o.Items, took), ran.deleted, ran.took
				withTook, deleted, purgeTook = withTook+took, deleted+ran.deleted, purgeTook+ran.took
				if ran.ranOut {
					fmt.Fprintf(w, "  (round %d: retention found nothing more to delete before the claims ended: fill more with --completed)\n", r+1)
				}
			} else {
				rr.Without = perSecond(o.Items, took)
				withoutTook += took
			}
		}
		rep.Scale.RetentionRounds = append(rep.Scale.RetentionRounds, rr)
		first := "without"
		if rr.WithFirst {
			first = "with"
		}
		fmt.Fprintf(w, "  round %d (%s first): %s/s without, %s/s with: %.0f%% slower; retention deleted %s items in %v, %s/s\n",
			r+1, first, cmdline.Commas(int64(rr.Without)), cmdline.Commas(int64(rr.With)), 100*rr.Slows(),
			cmdline.Commas(rr.Deleted), rr.PurgeTook.Round(time.Millisecond), cmdline.Commas(int64(float64(rr.Deleted)/max(rr.PurgeTook, time.Microsecond).Seconds())))
	}
	items := o.Rounds * o.Items
	s := &rep.Scale
	s.Retained, s.Unretained = perSecond(items, withTook), perSecond(items, withoutTook)
	s.Purged = float64(deleted) / max(purgeTook, time.Microsecond).Seconds()
	s.RetentionSlows = 1 - s.Retained/s.Unretained
	var slows []float64
	for _, rr := range s.RetentionRounds {
		slows = append(slows, rr.Slows())
	}
	fmt.Fprintf(w, "  plenum claim+complete with retention running: %s/s (%s/s without: %.0f%% slower over all rounds, median of the rounds %.0f%%); retention deleted %s items, %s/s\n",
		cmdline.Commas(int64(s.Retained)), cmdline.Commas(int64(s.Unretained)), 100*s.RetentionSlows, 100*median(slows), cmdline.Commas(deleted), cmdline.Commas(int64(s.Purged)))
	return nil
}

// purgeRun is what retention did during one drain.
type purgeRun struct {
	deleted int64
	took    time.Duration
	ranOut  bool // a pass found nothing to delete before the claims ended
}

// drainPurging drains o.Items items of queue through Plenum while another
// goroutine runs Store.Purge passes of limit items, pause apart. Passes
// run to their end: the last one may outlast the claims a little, and the
// deletion rate is over the passes' own time.
func drainPurging(ctx context.Context, sd sides, o benchOptions, queue string, limit int, pause time.Duration, settle func() error) (time.Duration, purgeRun, error) {
	var ran purgeRun
	if err := plenumEnqueue(ctx, sd.st, queue, o.Items); err != nil {
		return 0, ran, err
	}
	if err := settle(); err != nil {
		return 0, ran, err
	}
	var (
		purgeErr error
		wg       sync.WaitGroup
	)
	stop := make(chan struct{})
	wg.Go(func() {
		start := time.Now()
		defer func() { ran.took = time.Since(start) }()
		for {
			res, err := sd.st.Purge(ctx, core.PurgeParams{OlderThan: time.Hour, Limit: limit})
			if err != nil {
				purgeErr = err
				return
			}
			ran.deleted += int64(res.Items)
			if res.Items == 0 {
				ran.ranOut = true
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(pause):
			}
		}
	})
	took, err := timedRun(ctx, func(ctx context.Context) error { return plenumDrain(ctx, sd.st, queue, o) })
	close(stop)
	wg.Wait()
	if err != nil {
		return 0, ran, fmt.Errorf("bench: claim+complete with retention: %w", err)
	}
	if purgeErr != nil {
		return 0, ran, fmt.Errorf("bench: retention: %w", purgeErr)
	}
	return took, ran, nil
}

// median is the middle of xs (the mean of the two middle ones for an
// even count); 0 for none.
func median(xs []float64) float64 { return steadystate.Median(xs) }
