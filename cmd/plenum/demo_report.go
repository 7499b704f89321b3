package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/plenumdb/plenum/internal/cmd/cmdline"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// demoReport is what a demo run did and found.
type demoReport struct {
	Path     string
	Elapsed  time.Duration
	Children int

	Completed  int64 // completions that took effect
	Claims     int64 // claim batches that returned items
	Claimed    int64 // items claimed, over all batches
	Retries    int64 // failed attempts, each retried
	LostClaims int64 // completions or failures refused for a lost claim
	DeadFails  int64 // failures that dead-lettered instead of retrying

	Crashes    int64 // workers that died holding a batch
	Abandoned  int64 // claims those workers held
	OwnersLost int64 // live owners the reaper presumed dead (heartbeat late)
	Reaped     core.ReapResult

	Idle time.Duration // pauses between completions, mostly waiting for the reaper

	Barrier   core.Barrier
	JoinItems int64
	Join      joinCheck
	TxRetries uint64

	// Failed lists the invariants that did not hold.
	Failed []string

	// Pipeline is what the pipeline part did.
	Pipeline pipelineReport
}

// joinCheck is what the join found reading every child.
type joinCheck struct {
	JoinID      uuid.UUID
	Barrier     uuid.UUID // the barrier the join item names
	Seen        int
	Duplicates  int
	Missing     int
	BadKeys     int
	NotDone     int // children not completed
	BadResults  int
	BadAttempts int // children that took more or fewer attempts than planned
	SumSquares  uint64
	Example     string // the first problem, for the message
}

// report gathers the counters and reads back what the database says.
func (r *demoRun) report(ctx context.Context, rep demoReport) demoReport {
	rep.Elapsed = time.Since(r.start)
	rep.Idle = time.Duration(r.idle.Load())
	rep.Completed, rep.Claims, rep.Claimed = r.completed.Load(), r.claims.Load(), r.claimed.Load()
	rep.Retries, rep.LostClaims, rep.DeadFails = r.retries.Load(), r.lost.Load(), r.deadFails.Load()
	rep.Crashes, rep.Abandoned, rep.OwnersLost = r.crashes.Load(), r.abandoned.Load(), r.ownersLost.Load()
	rep.Reaped = core.ReapResult{OwnersRemoved: int(r.ownersRemoved.Load()), Crashed: int(r.crashed.Load()),
		TimedOut: int(r.timedOut.Load()), DeadLettered: int(r.deadLettered.Load())}
	r.mu.Lock()
	rep.Join = r.join
	barrierID := r.barrier
	r.mu.Unlock()
	// The parent's handler records its barrier when Expand returns. A
	// parent whose worker was taken for dead as its last page committed
	// returns an error instead, though its barrier exists and is
	// complete; completed, it does not run again. The join names the
	// barrier too.
	if barrierID == uuid.Nil {
		barrierID = rep.Join.Barrier
	}

	fail := func(format string, args ...any) { rep.Failed = append(rep.Failed, fmt.Sprintf(format, args...)) }
	n := int64(r.o.Children)

	// Exactly-once fan-in: one firing, one join, every arrival counted once.
	b, err := r.st.GetBarrier(ctx, barrierID)
	if err != nil {
		fail("barrier readable: %v", err)
	}
	rep.Barrier = b
	joins, err := r.st.Counts(ctx, r.joinQ)
	if err != nil {
		fail("join queue readable: %v", err)
	}
	for _, c := range joins {
		rep.JoinItems += c
	}
	switch {
	case !b.Fired() || !b.Sealed:
		fail("barrier fired once: sealed %v, fired %v", b.Sealed, b.Fired())
	case b.Expected != n || b.Arrived != n || b.Failed != 0:
		fail("barrier fired once: expected %d, arrived %d, failed %d; want %d, %d, 0", b.Expected, b.Arrived, b.Failed, n, n)
	case rep.JoinItems != 1 || joins[core.StateCompleted] != 1:
		fail("barrier fired once: %d join items (%v), want 1 completed", rep.JoinItems, joins)
	case b.JoinItemID != rep.Join.JoinID:
		fail("barrier fired once: barrier names join %s, the join worker got %s", b.JoinItemID, rep.Join.JoinID)
	}

	// The join read every child once, each with its own result.
	j := rep.Join
	if j.Seen != r.o.Children || j.Duplicates+j.Missing+j.BadKeys+j.NotDone+j.BadResults > 0 {
		fail("join saw every child once: saw %d of %d (%d duplicates, %d missing, %d bad keys, %d not completed, %d bad results; first: %s)",
			j.Seen, n, j.Duplicates, j.Missing, j.BadKeys, j.NotDone, j.BadResults, j.Example)
	} else if want := sumSquares(r.o.Children); j.SumSquares != want {
		fail("join sum of squares: %d, want %d", j.SumSquares, want)
	}

	// Every child completed exactly once; the parent too.
	counts, err := r.st.Counts(ctx, r.childQ)
	if err != nil {
		fail("child queue readable: %v", err)
	}
	if counts[core.StateCompleted] != n || len(counts) != 1 {
		fail("every child completed: states %v, want %d completed", counts, n)
	}
	if rep.Completed != n {
		fail("completions took effect once each: %d, want %d", rep.Completed, n)
	}
	parents, err := r.st.Counts(ctx, r.parentQ)
	if err != nil || parents[core.StateCompleted] != 1 || len(parents) != 1 {
		fail("parent completed with the seal: states %v (%v)", parents, err)
	}

	// Failed attempts are retried, and a crash uses no attempt.
	if want := plannedFailures(r.o); rep.Retries != want || rep.DeadFails != 0 {
		fail("each planned failure retried once: %d retried, %d dead, want %d retried", rep.Retries, rep.DeadFails, want)
	}
	if j.BadAttempts > 0 {
		fail("attempts: %d children took other than 1 attempt (2 if planned to fail): %s", j.BadAttempts, j.Example)
	}

	// Recovery: every claim of a dead worker released once, as a crash.
	if rep.Crashes != int64(r.o.Crashes) {
		fail("planned crashes happened: %d, want %d", rep.Crashes, r.o.Crashes)
	}
	if rep.OwnersLost == 0 {
		if int64(rep.Reaped.Crashed) != rep.Abandoned || int64(rep.Reaped.OwnersRemoved) != rep.Crashes {
			fail("crashes reaped once: %d claims of %d owners released, want %d of %d",
				rep.Reaped.Crashed, rep.Reaped.OwnersRemoved, rep.Abandoned, rep.Crashes)
		}
		if rep.LostClaims != 0 {
			fail("no live claim lost: %d", rep.LostClaims)
		}
	} else if int64(rep.Reaped.Crashed) < rep.Abandoned {
		fail("crashes reaped: %d claims released, want at least %d", rep.Reaped.Crashed, rep.Abandoned)
	}
	if rep.Reaped.TimedOut != 0 || rep.Reaped.DeadLettered != 0 {
		fail("no lease timed out, nothing dead-lettered: %d timed out, %d dead", rep.Reaped.TimedOut, rep.Reaped.DeadLettered)
	}
	rep.TxRetries = r.st.Stats().Retries
	return rep
}

// sumSquares is the sum of i*i for i below n, wrapping like the join's sum.
func sumSquares(n int) uint64 {
	var s uint64
	for i := range uint64(n) {
		s += i * i
	}
	return s
}

func plannedFailures(o demoOptions) int64 {
	if o.FailEvery == 0 {
		return 0
	}
	return int64(o.Children / o.FailEvery)
}

func printDemoSummary(w io.Writer, rep demoReport, o demoOptions) {
	row := func(label, format string, args ...any) {
		fmt.Fprintf(w, "  %-16s %s\n", label, fmt.Sprintf(format, args...))
	}
	fmt.Fprintf(w, "\nSummary\n")
	row("children", "%s completed (1 parent -> %s children -> 1 join)", cmdline.Commas(rep.Completed), cmdline.Commas(rep.Children))
	row("claims", "%s batches, %s items claimed by %s",
		cmdline.Commas(rep.Claims), cmdline.Commas(rep.Claimed), cmdline.Plural(o.Workers, "worker"))
	row("retries", "%s failed attempts, each retried and completed", cmdline.Commas(rep.Retries))
	row("crashes reaped", "%s of %s released by the reaper (%s removed)",
		cmdline.Plural(rep.Reaped.Crashed, "claim"), cmdline.Plural(rep.Crashes, "dead worker"), cmdline.Plural(rep.Reaped.OwnersRemoved, "owner"))
	if rep.OwnersLost > 0 {
		row("", "%s presumed dead while alive (heartbeat late); they registered again", cmdline.Plural(rep.OwnersLost, "live owner"))
	}
	b := rep.Barrier
	fired := "not fired"
	if b.Fired() {
		fired = "fired once at " + b.FiredAt.Format("15:04:05.000") + " UTC"
	}
	row("barrier", "%s: %s join item, expected %s, arrived %s, failed %s",
		fired, cmdline.Commas(rep.JoinItems), cmdline.Commas(b.Expected), cmdline.Commas(b.Arrived), cmdline.Commas(b.Failed))
	j := rep.Join
	keys := "every key exactly once"
	if j.Duplicates+j.Missing+j.BadKeys > 0 {
		keys = fmt.Sprintf("%d duplicate, %d missing, %d bad keys", j.Duplicates, j.Missing, j.BadKeys)
	}
	row("join", "saw %s results in keyset pages, %s; sum of squares %s", cmdline.Commas(j.Seen), keys, cmdline.Commas(j.SumSquares))
	row("time", "%s total, %s children/s", seconds(rep.Elapsed), rate(int64(rep.Children), rep.Elapsed))
	if busy := rep.Elapsed - rep.Idle; rep.Idle > 0 && busy > 0 {
		row("", "%s children/s not counting %s of pauses between completions (such as waiting for the reaper)",
			rate(int64(rep.Children), busy), seconds(rep.Idle))
	}
	row("tx retries", "%s (Store.Stats().Retries: transactions run again after SQLITE_BUSY)", cmdline.Commas(rep.TxRetries))
	fmt.Fprintln(w)
	if len(rep.Failed) == 0 {
		fmt.Fprintln(w, "All invariants held.")
		return
	}
	for _, f := range rep.Failed {
		fmt.Fprintf(w, "INVARIANT FAILED: %s\n", f)
	}
}

func crashPhrase(n int) string {
	if n == 0 {
		return "no crashes"
	}
	return cmdline.Plural(n, "worker") + " crashing"
}

func ordinal(n int) string {
	switch {
	case n == 0:
		return "no child"
	case n == 1:
		return "child"
	case n%10 == 1 && n%100 != 11:
		return strconv.Itoa(n) + "st child"
	case n%10 == 2 && n%100 != 12:
		return strconv.Itoa(n) + "nd child"
	case n%10 == 3 && n%100 != 13:
		return strconv.Itoa(n) + "rd child"
	}
	return strconv.Itoa(n) + "th child"
}
