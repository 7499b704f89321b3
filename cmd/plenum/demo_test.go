package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/internal/cmd/cmdline"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/sqlite"
)

// smallDemo are the options of the tests' runs: a small workflow, and
// thresholds that hold on a loaded machine (CI, or another copy of the
// tests beside these). The demo's own 2 s StaleAfter shows a crash reaped
// quickly, but there a heartbeat a few seconds late makes a live worker
// look dead: it is reaped, stops and starts again as a new owner, over
// and over, its claims counted as crashes nobody planned. At 10 s the
// planned crashes cost a few seconds more to reap. The pipeline part is
// small too (the pipeline's tests set their own number of orders), and
// the run's bound is the demo's own, 5 minutes: on a machine this busy
// two minutes are not always enough.
func smallDemo() demoOptions {
	o := defaultDemoOptions()
	o.Children, o.Workers, o.Batch, o.Page, o.Crashes, o.FailEvery, o.Orders = 300, 3, 10, 40, 1, 7, 20
	o.StaleAfter, o.Heartbeat = 10*time.Second, 500*time.Millisecond
	o.Progress = 500 * time.Millisecond
	o.Timeout = 5 * time.Minute
	return o
}

// The whole workflow runs, every invariant holds, and the numbers in the
// report are the exact ones the options imply.
func TestDemo_SmallRunHoldsEveryInvariant(t *testing.T) {
	t.Parallel()
	o := smallDemo()
	var out bytes.Buffer
	rep, err := runDemo(t.Context(), &out, o)
	if err != nil {
		t.Fatalf("runDemo: %v\n%s", err, out.String())
	}
	if len(rep.Failed) != 0 {
		t.Fatalf("failed invariants: %v", rep.Failed)
	}
	n := int64(o.Children)
	if rep.Completed != n || rep.Barrier.Arrived != n || rep.Barrier.Expected != n || rep.Barrier.Failed != 0 || !rep.Barrier.Fired() {
		t.Errorf("completed %d, barrier %+v; want %d arrivals, fired", rep.Completed, rep.Barrier, n)
	}
	if rep.JoinItems != 1 || rep.Join.Seen != o.Children || rep.Join.SumSquares != sumSquares(o.Children) {
		t.Errorf("join items %d, join %+v", rep.JoinItems, rep.Join)
	}
	if want := int64(o.Children / o.FailEvery); rep.Retries != want {
		t.Errorf("retries %d, want %d", rep.Retries, want)
	}
	if rep.Crashes != 1 || rep.Abandoned == 0 || int64(rep.Reaped.Crashed) != rep.Abandoned {
		t.Errorf("crashes %d holding %d, reaped %+v", rep.Crashes, rep.Abandoned, rep.Reaped)
	}
	s := out.String()
	for _, want := range []string{"worker 1 crashed", "reaper:", "barrier fired", "Summary", "All invariants held."} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}

// Without crashes there is nothing to wait for, and no failure either.
func TestDemo_NoCrashesNoFailures(t *testing.T) {
	t.Parallel()
	o := smallDemo()
	o.Crashes, o.FailEvery, o.Progress = 0, 0, 0
	// Nothing is meant to crash: a threshold far above any heartbeat's
	// delay, so that a crash counted is one the runtime made up.
	o.StaleAfter, o.Heartbeat = 25*time.Second, time.Second
	var out bytes.Buffer
	rep, err := runDemo(t.Context(), &out, o)
	if err != nil {
		t.Fatalf("runDemo: %v\n%s", err, out.String())
	}
	if rep.Retries != 0 || rep.Crashes != 0 || rep.Reaped.Crashed != 0 || rep.Completed != int64(o.Children) {
		t.Errorf("report %+v", rep)
	}
}

// More workers than children, every one of them crashing once but the
// last: the victims leave work for the others, and it all completes.
func TestDemo_TinyRunManyCrashes(t *testing.T) {
	t.Parallel()
	o := smallDemo()
	o.Children, o.Workers, o.Crashes, o.Batch, o.Progress = 5, 4, 4, 50, 0
	var out bytes.Buffer
	rep, err := runDemo(t.Context(), &out, o)
	if err != nil {
		t.Fatalf("runDemo: %v\n%s", err, out.String())
	}
	if rep.Crashes != 4 || rep.Abandoned != 4 || rep.Reaped.Crashed != 4 {
		t.Errorf("crashes %d holding %d, reaped %+v", rep.Crashes, rep.Abandoned, rep.Reaped)
	}
}

// A database that already holds work is refused: the invariants count
// exactly and could not be checked on top of an earlier run.
func TestDemo_RefusesTablesInUse(t *testing.T) {
	t.Parallel()
	o := smallDemo()
	o.Children, o.Crashes, o.Progress = 20, 0, 0
	o.DB = filepath.Join(t.TempDir(), "demo.db")
	var out bytes.Buffer
	if _, err := runDemo(t.Context(), &out, o); err != nil {
		t.Fatalf("first run: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "plenum inspect --db") {
		t.Errorf("a run on --db does not say how to inspect it:\n%s", out.String())
	}
	_, err := runDemo(t.Context(), &out, o)
	if err == nil || !strings.Contains(err.Error(), "already hold") {
		t.Fatalf("second run on the same tables: %v", err)
	}
	// Another prefix in the same file is fine.
	o.Prefix = "other_"
	if _, err := runDemo(t.Context(), &out, o); err != nil {
		t.Fatalf("run under another prefix: %v", err)
	}
}

func TestDemo_CommandExitStatus(t *testing.T) {
	t.Parallel()
	code, out, errOut := cli(t, "demo", "--children", "50", "--workers", "2", "--batch", "5", "--crashes", "0")
	if code != cmdline.ExitOK || !strings.Contains(out, "All invariants held.") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

func TestDemo_CancelledRunStops(t *testing.T) {
	t.Parallel()
	o := smallDemo()
	o.Children, o.Progress = 100000, 0
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := runDemo(ctx, &bytes.Buffer{}, o)
	// The deadline may pass before the run has begun (a loaded machine
	// is slow to set up): then the step it was at reports the deadline.
	if err == nil || !strings.Contains(err.Error(), "interrupted") && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled run: %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("cancelled run took %v to stop", d)
	}
}

// A run cancelled before its tables exist is interrupted too, however slow
// the machine is to make them.
func TestDemo_CancelledDuringSetupIsInterrupted(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := runDemo(ctx, &bytes.Buffer{}, smallDemo())
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("run cancelled before setup: %v, want it interrupted", err)
	}
}

func TestDemo_OptionErrors(t *testing.T) {
	t.Parallel()
	for _, mut := range []func(*demoOptions){
		func(o *demoOptions) { o.Children = 0 },
		func(o *demoOptions) { o.Workers = 0 },
		func(o *demoOptions) { o.Crashes = o.Workers + 1 },
		func(o *demoOptions) { o.Children, o.Crashes = 1, 1 },
		func(o *demoOptions) { o.FailEvery = -1 },
		func(o *demoOptions) { o.Page = 0 },
		func(o *demoOptions) { o.Prefix = "1bad" },
		func(o *demoOptions) { o.StaleAfter = time.Second },
	} {
		o := smallDemo()
		mut(&o)
		_, err := runDemo(t.Context(), &bytes.Buffer{}, o)
		var ue *cmdline.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("options %+v: error %v, want a usage error", o, err)
		}
	}
}

// The checks after the run compare what the workers counted with what the
// database says: a count that does not add up fails the named invariant.
func TestDemo_ReportNamesFailedInvariant(t *testing.T) {
	t.Parallel()
	rep, r := reopenedDemo(t)
	r.barrier, r.join = rep.Barrier.ID, rep.Join
	r.retries.Store(rep.Retries + 1) // one retry too many
	r.crashed.Store(2)               // crashes nobody planned
	got := r.report(t.Context(), demoReport{Children: r.o.Children})
	want := []string{"each planned failure retried once", "crashes reaped once"}
	if len(got.Failed) != len(want) {
		t.Fatalf("failed invariants %q, want %q", got.Failed, want)
	}
	for i, w := range want {
		if !strings.HasPrefix(got.Failed[i], w) {
			t.Errorf("failed invariant %q, want it to start with %q", got.Failed[i], w)
		}
	}
	var out bytes.Buffer
	printDemoSummary(&out, got, r.o)
	if !strings.Contains(out.String(), "INVARIANT FAILED: each planned failure retried once") {
		t.Errorf("summary does not name the failed invariant:\n%s", out.String())
	}
}

// A parent whose worker was taken for dead as its last page committed
// never learns its barrier (Expand returned an error, the parent is
// completed and does not run again): the report finds the barrier through
// the join, and every invariant holds.
func TestDemo_ReportFindsTheBarrierThroughTheJoin(t *testing.T) {
	t.Parallel()
	rep, r := reopenedDemo(t)
	r.join = rep.Join // and no r.barrier
	r.retries.Store(rep.Retries)
	got := r.report(t.Context(), demoReport{Children: r.o.Children})
	if len(got.Failed) != 0 || got.Barrier.ID != rep.Barrier.ID {
		t.Errorf("failed invariants %q, barrier %s; want none, and barrier %s", got.Failed, got.Barrier.ID, rep.Barrier.ID)
	}
}

// reopenedDemo runs a small demo without crashes on a file, and returns
// its report and a new demo run on its tables, whose counters a test sets
// before running the report's checks again.
func reopenedDemo(t *testing.T) (demoReport, *demoRun) {
	t.Helper()
	o := smallDemo()
	o.Children, o.Crashes, o.Progress = 30, 0, 0
	o.DB = filepath.Join(t.TempDir(), "demo.db")
	rep, err := runDemo(t.Context(), &bytes.Buffer{}, o)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlite.Open(o.DB)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st, err := core.Open(t.Context(), db, sqlite.Dialect(), core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := newDemoRun(o, st, &bytes.Buffer{})
	r.start = time.Now()
	r.completed.Store(rep.Completed)
	return rep, r
}

// The demo's pipeline part runs its expand, the divide inside each
// element, the collapse and the invoice, each step once, and prints two
// lines.
func TestDemo_PipelineRunsEachStepOnce(t *testing.T) {
	t.Parallel()
	o := smallDemo()
	o.Orders = 40
	var out bytes.Buffer
	rep, err := runDemo(t.Context(), &out, o)
	if err != nil {
		t.Fatalf("runDemo: %v\n%s", err, out.String())
	}
	p := rep.Pipeline
	if p.Invoice != demoWant(o.Orders) || p.Steps != 4*o.Orders+3 || p.Repeated != 0 || len(p.Failed) != 0 {
		t.Errorf("pipeline report %+v, want %q in %d steps, each once", p, demoWant(o.Orders), 4*o.Orders+3)
	}
	for _, want := range []string{`Pipeline "orders": expand 40 orders`, "completed in", "40 orders, 120 units, 30,000 cents; 163 steps, each once"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// A pipeline run that did not write the right invoice, or ran a step
// twice, fails the demo, naming what went wrong.
func TestDemo_PipelineCheckNamesTheBrokenInvariant(t *testing.T) {
	t.Parallel()
	done := pipeline.Run{State: pipeline.StateCompleted, Output: []byte(`"` + demoWant(2) + `"`)}
	for range 11 {
		done.Steps = append(done.Steps, pipeline.StepRun{Attempt: 1})
	}
	for _, c := range []struct {
		name string
		edit func(r *pipeline.Run)
		want string
	}{
		{"fine", func(*pipeline.Run) {}, ""},
		{"halted", func(r *pipeline.Run) { r.State = pipeline.StateHalted }, "ended halted"},
		{"wrong invoice", func(r *pipeline.Run) { r.Output = []byte(`"2 orders"`) }, "the invoice says"},
		{"step twice", func(r *pipeline.Run) { r.Steps[3].Attempt = 2 }, "1 steps ran more than once"},
		{"step missing", func(r *pipeline.Run) { r.Steps = r.Steps[1:] }, "10 steps ran, want 11"},
	} {
		r := done
		r.Steps = append([]pipeline.StepRun(nil), done.Steps...)
		c.edit(&r)
		_, err := checkPipeline(io.Discard, pipelineReport{Run: r}, 2, uuid.Nil)
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}
