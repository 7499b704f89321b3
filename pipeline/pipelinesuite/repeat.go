package pipelinesuite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/worker"
)

// repsTable makes the subtest's table of fenced repetitions: a row per
// repetition whose effect committed, named by its pipeline and index,
// with no key, so that one committed twice shows.
func (e *env) repsTable() string {
	e.t.Helper()
	table := e.prefix + "reps"
	if e.collect != nil {
		return table // Definitions builds the flows only
	}
	if _, err := e.db.ExecContext(e.ctx, "CREATE TABLE "+table+" (name VARCHAR(64) NOT NULL, rep INTEGER NOT NULL)"); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() {
		for _, stmt := range e.d.DropTable(table) {
			_, _ = e.db.ExecContext(context.Background(), stmt)
		}
	})
	return table
}

// fenceRep writes the row of repetition rep of name through the fence of
// the item that runs it.
func (e *env) fenceRep(ctx context.Context, table, name string, rep pipeline.Repetition) error {
	return pipeline.Fence(ctx, func(ctx context.Context, f *core.Fenced) error {
		_, err := f.ExecContext(ctx, e.d.Rebind("INSERT INTO "+table+" (name, rep) VALUES (?, ?)"), name, rep.Index)
		return err
	})
}

// committedReps is the indexes of name's committed repetitions, in order.
func (e *env) committedReps(table, name string) []int {
	e.t.Helper()
	rows, err := e.db.QueryContext(e.ctx, e.d.Rebind("SELECT rep FROM "+table+" WHERE name = ? ORDER BY rep"), name)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var reps []int
	for rows.Next() {
		var k int
		if err := rows.Scan(&k); err != nil {
			e.t.Fatal(err)
		}
		reps = append(reps, k)
	}
	if err := rows.Err(); err != nil {
		e.t.Fatal(err)
	}
	return reps
}

// repLog keeps the repetitions a body saw, from any goroutine.
type repLog struct {
	mu   sync.Mutex
	reps []pipeline.Repetition
}

func (l *repLog) add(rep pipeline.Repetition) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reps = append(l.reps, rep)
}

func (l *repLog) all() []pipeline.Repetition {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reps)
}

func indexes(reps []pipeline.Repetition) []int {
	var ks []int
	for _, r := range reps {
		ks = append(ks, r.Index)
	}
	return ks
}

// repeatUntilDone: a RepeatUntil runs its body every interval, each
// repetition once, not before its time on the database clock, the
// scheduled times exactly the step's start plus k intervals, until the
// body says done; its output goes to the step after it, and each
// repetition's fenced write committed once.
func repeatUntilDone(e *env) {
	every := 150 * time.Millisecond
	table := e.repsTable()
	var seen repLog
	var mu sync.Mutex
	var early []string
	tick := pipeline.RepeatUntil("tick", func(ctx context.Context, n int, rep pipeline.Repetition) (int, bool, error) {
		now, err := e.store.Now(ctx)
		if err != nil {
			return 0, false, err
		}
		if now.Before(rep.At) {
			mu.Lock()
			early = append(early, fmt.Sprintf("repetition %d ran at %v, before its time %v", rep.Index, now, rep.At))
			mu.Unlock()
		}
		seen.add(rep)
		return n + rep.Index, rep.Index == 3, e.fenceRep(ctx, table, "repeats", rep)
	}, pipeline.RepeatOptions{Every: every})
	p := define(e, "repeats", pipeline.Then(tick, add("after", 100)))
	eng := e.engine(pipeline.EngineOptions{}, p)
	r := e.waitRun(eng, e.trigger(eng, p, 10), pipeline.StateCompleted)
	if got := output[int](e, r); got != 113 {
		e.t.Errorf("output %d, want 113 (10, plus the index of the repetition that said done, plus 100)", got)
	}
	reps := seen.all()
	if got := indexes(reps); !slices.Equal(got, []int{0, 1, 2, 3}) {
		e.t.Fatalf("repetitions %v, want 0 to 3, each once", got)
	}
	for _, rep := range reps {
		if want := reps[0].At.Add(time.Duration(rep.Index) * every); !rep.At.Equal(want) || rep.Missed != 0 || rep.Last {
			e.t.Errorf("repetition %+v, want it due at %v (the start plus %d intervals), none missed, not the last", rep, want, rep.Index)
		}
	}
	mu.Lock()
	for _, s := range early {
		e.t.Error(s)
	}
	mu.Unlock()
	if got := e.committedReps(table, "repeats"); !slices.Equal(got, []int{0, 1, 2, 3}) {
		e.t.Errorf("committed repetitions %v, want 0 to 3, each once", got)
	}
}

// repeatEndsAtUntil: a RepeatUntil whose body never says done ends after
// the last repetition due within Until, which alone is told it is the
// last, with that repetition's output.
func repeatEndsAtUntil(e *env) {
	var seen repLog
	tick := pipeline.RepeatUntil("tick", func(_ context.Context, n int, rep pipeline.Repetition) (int, bool, error) {
		seen.add(rep)
		return n + rep.Index, false, nil
	}, pipeline.RepeatOptions{Every: 100 * time.Millisecond, Until: 350 * time.Millisecond})
	p := define(e, "repeats-until", tick)
	eng := e.engine(pipeline.EngineOptions{}, p)
	r := e.waitRun(eng, e.trigger(eng, p, 10), pipeline.StateCompleted)
	if got := output[int](e, r); got != 13 {
		e.t.Errorf("output %d, want 13 (the last repetition's, index 3 at 300 ms of 350)", got)
	}
	reps := seen.all()
	if got := indexes(reps); !slices.Equal(got, []int{0, 1, 2, 3}) {
		e.t.Fatalf("repetitions %v, want 0 to 3", got)
	}
	for _, rep := range reps {
		if rep.Last != (rep.Index == 3) {
			e.t.Errorf("repetition %d: Last %v, want it set on 3 alone", rep.Index, rep.Last)
		}
	}
}

// repeatOnError: a repetition that fails its last attempt goes on to the
// next under ContinueOnError, committing nothing it fenced, its item's
// result naming the error; under HaltOnError it halts the run, as a
// step's last failed attempt does. A repetition that runs past its
// Timeout fails the same way: continued from, or halting the run.
func repeatOnError(e *env) {
	table := e.repsTable()
	var mu sync.Mutex
	calls := map[string]int{}
	body := func(name string, fail func(ctx context.Context) error) func(ctx context.Context, n int, rep pipeline.Repetition) (int, bool, error) {
		return func(ctx context.Context, n int, rep pipeline.Repetition) (int, bool, error) {
			mu.Lock()
			calls[fmt.Sprintf("%s/%d", name, rep.Index)]++
			mu.Unlock()
			if err := e.fenceRep(ctx, table, name, rep); err != nil {
				return 0, false, err
			}
			if rep.Index == 1 {
				return 0, false, fail(ctx)
			}
			return n + rep.Index, false, nil
		}
	}
	failing := func(context.Context) error { return errors.New("the source is down") }
	overrunning := func(ctx context.Context) error {
		<-ctx.Done()
		return ctx.Err()
	}
	sched := pipeline.RepeatOptions{Every: 100 * time.Millisecond, Until: 250 * time.Millisecond}
	twice := pipeline.StepOptions{MaxAttempts: 2, Backoff: pipeline.Backoff{Initial: 10 * time.Millisecond}}
	timed := pipeline.StepOptions{MaxAttempts: 1, Timeout: 2 * time.Second}
	opts := func(step pipeline.StepOptions, on pipeline.OnError) pipeline.RepeatOptions {
		o := sched
		o.StepOptions, o.OnError = step, on
		return o
	}
	defs := map[string]*pipeline.Pipeline[int, int]{
		"fails-continues":   define(e, "fails-continues", pipeline.RepeatUntil("tick", body("fails-continues", failing), opts(twice, pipeline.ContinueOnError))),
		"fails-halts":       define(e, "fails-halts", pipeline.RepeatUntil("tick", body("fails-halts", failing), opts(twice, pipeline.HaltOnError))),
		"overruns-continue": define(e, "overruns-continue", pipeline.RepeatUntil("tick", body("overruns-continue", overrunning), opts(timed, pipeline.ContinueOnError))),
		"overruns-halt":     define(e, "overruns-halt", pipeline.RepeatUntil("tick", body("overruns-halt", overrunning), opts(timed, pipeline.HaltOnError))),
	}
	var all []pipeline.Definition
	for _, p := range defs {
		all = append(all, p)
	}
	eng := e.engine(pipeline.EngineOptions{}, all...)
	triggered := map[string]uuid.UUID{}
	for name, p := range defs {
		triggered[name] = e.trigger(eng, p, 10)
	}
	for _, name := range []string{"fails-continues", "overruns-continue"} {
		r := e.waitRun(eng, triggered[name], pipeline.StateCompleted)
		if got := output[int](e, r); got != 12 {
			e.t.Errorf("%s: output %d, want 12 (repetition 2's, the last)", name, got)
		}
		if got := e.committedReps(table, name); !slices.Equal(got, []int{0, 2}) {
			e.t.Errorf("%s: committed repetitions %v, want 0 and 2 (the failed one's fenced write rolled back)", name, got)
		}
		failed := 0
		for _, s := range r.Steps {
			var res struct {
				Repetition *int
				Error      string
			}
			if jsonUnmarshal(s.Output, &res) == nil && res.Repetition != nil && *res.Repetition == 1 && res.Error != "" {
				failed++
			}
		}
		if failed != 1 {
			e.t.Errorf("%s: %d items of repetition 1 with an error in their result, want 1; steps %+v", name, failed, r.Steps)
		}
	}
	for _, name := range []string{"fails-halts", "overruns-halt"} {
		r := e.waitRun(eng, triggered[name], pipeline.StateHalted)
		if r.Halt == nil || r.Halt.Reason != pipeline.ReasonAttemptsExhausted || r.Halt.Step != "tick" {
			e.t.Errorf("%s: halt %+v, want the repeat's, attempts exhausted", name, r.Halt)
		}
		if got := e.committedReps(table, name); !slices.Equal(got, []int{0}) {
			e.t.Errorf("%s: committed repetitions %v, want 0 alone", name, got)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for name, want := range map[string]int{"fails-continues": 2, "fails-halts": 2, "overruns-continue": 1, "overruns-halt": 1} {
		if got := calls[name+"/1"]; got != want {
			e.t.Errorf("%s: repetition 1 ran %d times, want %d (its attempts)", name, got, want)
		}
	}
}

// repeatCatchUp: after a downtime, simulated on the database clock by a
// worker whose store is 5½ hours ahead, a RepeatUntil of every hour
// within 5½ hours runs each missed repetition in turn under RunMissed,
// and only the latest one due, told how many it skipped, under
// SkipToLatest; each then ends its schedule there, the next being past
// its end.
func repeatCatchUp(e *env) {
	table := e.repsTable()
	seen := map[string]*repLog{"run-missed": {}, "skip-to-latest": {}}
	def := func(name string, c pipeline.CatchUp) *pipeline.Pipeline[int, int] {
		return define(e, name, pipeline.RepeatUntil("hourly", func(ctx context.Context, n int, rep pipeline.Repetition) (int, bool, error) {
			seen[name].add(rep)
			return n + rep.Index, false, e.fenceRep(ctx, table, name, rep)
		}, pipeline.RepeatOptions{Every: time.Hour, Until: 5*time.Hour + 30*time.Minute, CatchUp: c}))
	}
	missed, latest := def("run-missed", pipeline.RunMissed), def("skip-to-latest", pipeline.SkipToLatest)

	// Before the downtime: the first repetitions run, the next due in an
	// hour; then the worker stops.
	before, stop := e.engineOn(e.store, 0, missed, latest)
	runs := map[string]uuid.UUID{"run-missed": e.trigger(before, missed, 0), "skip-to-latest": e.trigger(before, latest, 0)}
	for name := range runs {
		for len(e.committedReps(table, name)) == 0 {
			select {
			case <-e.ctx.Done():
				e.t.Fatalf("%s: its first repetition did not commit", name)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	stop()

	// After it: 5½ hours later on the database clock.
	later, err := core.Open(e.ctx, e.db, e.d, core.Options{Prefix: e.prefix, ClockOffset: 5*time.Hour + 30*time.Minute})
	if err != nil {
		e.t.Fatal(err)
	}
	after, stop := e.engineOn(later, 0, missed, latest)
	defer stop()
	for name, want := range map[string]struct {
		reps   []int
		missed []int
	}{
		"run-missed":     {[]int{0, 1, 2, 3, 4, 5}, []int{0, 0, 0, 0, 0, 0}},
		"skip-to-latest": {[]int{0, 5}, []int{0, 4}},
	} {
		r := e.waitRun(after, runs[name], pipeline.StateCompleted)
		if got := output[int](e, r); got != 5 {
			e.t.Errorf("%s: output %d, want 5 (repetition 5's, the last within 5½ hours)", name, got)
		}
		reps := seen[name].all()
		var gotMissed []int
		for _, rep := range reps {
			gotMissed = append(gotMissed, rep.Missed)
			if at := reps[0].At.Add(time.Duration(rep.Index) * time.Hour); !rep.At.Equal(at) || rep.Last != (rep.Index == 5) {
				e.t.Errorf("%s: repetition %+v, want it due at %v, the last only at 5", name, rep, at)
			}
		}
		if got := indexes(reps); !slices.Equal(got, want.reps) || !slices.Equal(gotMissed, want.missed) {
			e.t.Errorf("%s: repetitions %v missing %v, want %v missing %v", name, got, gotMissed, want.reps, want.missed)
		}
		if got := e.committedReps(table, name); !slices.Equal(got, want.reps) {
			e.t.Errorf("%s: committed repetitions %v, want %v", name, got, want.reps)
		}
	}
}

// engineOn starts an engine of defs with a worker of its own on store,
// and returns it with the function that stops the worker (also called at
// the end of the test).
func (e *env) engineOn(store *core.Store, slots int, defs ...pipeline.Definition) (*pipeline.Engine, func()) {
	e.t.Helper()
	e.stopAtEngine(defs)
	cfg := workerConfig(store, nil)
	if slots > 0 {
		cfg.Queues = map[string]worker.QueueConfig{queue: {MaxWorkers: slots}}
	}
	worker.FitPool(store, cfg)
	w, err := worker.New(store, cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	eng, err := pipeline.New(store, w, pipeline.EngineOptions{Queue: queue})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := eng.Register(defs...); err != nil {
		e.t.Fatal(err)
	}
	if err := w.Start(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := w.Stop(ctx); err != nil {
				e.t.Errorf("stop the worker: %v", err)
			}
		})
	}
	e.t.Cleanup(stop)
	return eng, stop
}
