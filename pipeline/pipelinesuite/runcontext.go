package pipelinesuite

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/pipeline"
)

// runContextCarried: a step's writes to the run's context are read by
// the steps after it (a divide's branches and its combine, the step after
// the combine), each function reads its own writes at once, a key no step
// wrote is absent, a value read as a type it is not is an error, and Get
// shows every key with the item of the step that wrote it.
func runContextCarried(e *env) {
	open := pipeline.Step("open", func(ctx context.Context, who string) (int, error) {
		if err := pipeline.SetRunContext(ctx, "customer", who); err != nil {
			return 0, err
		}
		if err := pipeline.SetRunContext(ctx, "count", 2); err != nil {
			return 0, err
		}
		if c, ok, err := pipeline.RunContext[string](ctx, "customer"); err != nil || !ok || c != who {
			return 0, pipeline.Permanent(fmt.Errorf("own write read back as %q, %v, %v", c, ok, err))
		}
		return 1, nil
	})
	var branches []pipeline.Flow[int, string]
	for i := range 2 {
		branches = append(branches, pipeline.Step(fmt.Sprintf("b%d", i), func(ctx context.Context, n int) (string, error) {
			c, ok, err := pipeline.RunContext[string](ctx, "customer")
			if err != nil || !ok {
				return "", pipeline.Permanent(fmt.Errorf("branch %d read customer: %v, %v", i, ok, err))
			}
			return c, pipeline.SetRunContext(ctx, fmt.Sprintf("branch-%d", i), i+n)
		}))
	}
	fan := pipeline.Divide("fan", branches, func(ctx context.Context, outs []string) (string, error) {
		sum := 0
		for i := range outs {
			v, ok, err := pipeline.RunContext[int](ctx, fmt.Sprintf("branch-%d", i))
			if err != nil || !ok {
				return "", pipeline.Permanent(fmt.Errorf("combine read branch-%d: %v, %v", i, ok, err))
			}
			sum += v
		}
		return fmt.Sprintf("%s=%d", strings.Join(outs, "+"), sum), nil
	})
	closing := pipeline.Step("close", func(ctx context.Context, s string) (string, error) {
		count, ok, err := pipeline.RunContext[int](ctx, "count")
		if err != nil || !ok {
			return "", pipeline.Permanent(fmt.Errorf("close read count: %v, %v", ok, err))
		}
		if _, ok, err := pipeline.RunContext[int](ctx, "nobody-wrote-this"); ok || err != nil {
			return "", pipeline.Permanent(fmt.Errorf("a key never written: %v, %v", ok, err))
		}
		if _, _, err := pipeline.RunContext[int](ctx, "customer"); err == nil {
			return "", pipeline.Permanent(errors.New("a string read as an int"))
		}
		return fmt.Sprintf("%s count=%d", s, count), nil
	})
	p := define(e, "runcontext", pipeline.Then(open, pipeline.Then(fan, closing)))
	eng := e.engine(pipeline.EngineOptions{}, p)
	r := e.waitRun(eng, e.trigger(eng, p, "ada"), pipeline.StateCompleted)
	if got := output[string](e, r); got != "ada+ada=3 count=2" {
		e.t.Errorf("output %q, want %q", got, "ada+ada=3 count=2")
	}
	items := map[string]uuid.UUID{}
	for _, s := range r.Steps {
		items[s.Step] = s.Item
	}
	want := map[string]struct{ value, by string }{
		"branch-0": {"1", "b0"}, "branch-1": {"2", "b1"}, "count": {"2", "open"}, "customer": {`"ada"`, "open"},
	}
	if len(r.Context) != len(want) {
		e.t.Fatalf("Get's context %+v, want the keys of %v", r.Context, want)
	}
	for _, c := range r.Context {
		w, ok := want[c.Key]
		if !ok || string(c.Value) != w.value || c.WrittenBy != items[w.by] || c.UpdatedAt.IsZero() {
			e.t.Errorf("Get's context key %q = %s by %s at %v, want %s by %s's item %s", c.Key, c.Value, c.WrittenBy, c.UpdatedAt, w.value, w.by, items[w.by])
		}
	}
}

// runContextBounds: a key or value out of bounds is refused when set,
// naming the key, and halts the run; a write that would take the context
// past its keys' bound halts the run when the step completes, naming the
// key, and none of that step's writes is kept.
func runContextBounds(e *env) {
	big := pipeline.Step("big", func(ctx context.Context, _ int) (int, error) {
		err := pipeline.SetRunContext(ctx, "huge", strings.Repeat("x", core.MaxRunContextValueBytes))
		if !errors.Is(err, core.ErrInvalidInput) {
			return 0, pipeline.Permanent(fmt.Errorf("a value over the bound set: %v", err))
		}
		return 0, err
	})
	many := pipeline.Step("many", func(ctx context.Context, _ int) (int, error) {
		for i := range core.MaxRunContextKeys + 1 {
			if err := pipeline.SetRunContext(ctx, fmt.Sprintf("k%02d", i), i); err != nil {
				return 0, err
			}
		}
		return 0, nil
	})
	pb, pm := define(e, "ctx-big", big), define(e, "ctx-many", many)
	eng := e.engine(pipeline.EngineOptions{}, pb, pm)
	for _, c := range []struct {
		p    pipeline.Definition
		want string
	}{
		{pb, `run context key "huge"`},
		{pm, fmt.Sprintf(`run context key "k%02d": run %%s holds %d keys already`, core.MaxRunContextKeys, core.MaxRunContextKeys)},
	} {
		run := e.trigger(eng, c.p, 0)
		r := e.waitRun(eng, run, pipeline.StateHalted)
		want := c.want
		if strings.Contains(want, "%s") {
			want = fmt.Sprintf(want, run)
		}
		if len(r.Steps) != 1 || !strings.Contains(r.Steps[0].Error, want) {
			e.t.Errorf("halted run's steps:\n%swant an error with %q", steps(r), want)
		}
		if len(r.Context) != 0 {
			e.t.Errorf("a refused step's writes kept: %+v", r.Context)
		}
	}
}

// runContextLastCommitWins: the branches of a divide, all running at
// once, write one key and a key each. Every branch's own key is kept, and
// the shared key holds the value of the branch whose transaction
// committed last, recorded as its writer. Commit order is read from a
// counter that each branch's completing transaction increments (fenced):
// its row lock, held to commit, orders the transactions as they commit.
func runContextLastCommitWins(e *env) {
	const n = 6
	counter, order := e.prefix+"ctxcounter", e.prefix+"ctxorder"
	// started is closed once every branch runs: none completes before.
	started, all := make(chan struct{}), make(chan int, n)
	var branches []pipeline.Flow[int, int]
	for i := range n {
		branches = append(branches, pipeline.Step(fmt.Sprintf("w%d", i), func(ctx context.Context, _ int) (int, error) {
			if info, _ := pipeline.StepInfo(ctx); info.Attempt == 1 {
				all <- i
				select {
				case <-started:
				case <-ctx.Done():
					return 0, ctx.Err()
				}
			}
			if err := pipeline.SetRunContext(ctx, "winner", i); err != nil {
				return 0, err
			}
			if err := pipeline.SetRunContext(ctx, fmt.Sprintf("own-%d", i), i); err != nil {
				return 0, err
			}
			return i, pipeline.Fence(ctx, func(ctx context.Context, f *core.Fenced) error {
				if _, err := f.ExecContext(ctx, "UPDATE "+counter+" SET n = n + 1"); err != nil {
					return err
				}
				var seq int
				if err := f.QueryRowContext(ctx, "SELECT n FROM "+counter).Scan(&seq); err != nil {
					return err
				}
				_, err := f.ExecContext(ctx, e.d.Rebind("INSERT INTO "+order+" (branch, seq) VALUES (?, ?)"), i, seq)
				return err
			})
		}))
	}
	p := define(e, "ctx-race", pipeline.Divide("race", branches, func(_ context.Context, outs []int) (int, error) { return len(outs), nil }))
	eng := e.engine(pipeline.EngineOptions{}, p)
	// The tables and the gate after the engine: its start is where a
	// reader of the suite's definitions stops.
	for _, stmt := range []string{
		"CREATE TABLE " + counter + " (n INT NOT NULL)",
		"INSERT INTO " + counter + " (n) VALUES (0)",
		"CREATE TABLE " + order + " (branch INT NOT NULL, seq INT NOT NULL)",
	} {
		if _, err := e.db.ExecContext(e.ctx, stmt); err != nil {
			e.t.Fatal(err)
		}
	}
	e.t.Cleanup(func() {
		for _, table := range []string{counter, order} {
			for _, stmt := range e.d.DropTable(table) {
				_, _ = e.db.ExecContext(context.Background(), stmt)
			}
		}
	})
	go func() {
		for range n {
			select {
			case <-all:
			case <-e.ctx.Done():
				return
			}
		}
		close(started)
	}()
	r := e.waitRun(eng, e.trigger(eng, p, 0), pipeline.StateCompleted)

	last, lastSeq, rows := -1, 0, 0
	res, err := e.db.QueryContext(e.ctx, "SELECT branch, seq FROM "+order)
	if err != nil {
		e.t.Fatal(err)
	}
	for res.Next() {
		var b, seq int
		if err := res.Scan(&b, &seq); err != nil {
			e.t.Fatal(err)
		}
		rows++
		if seq > lastSeq {
			last, lastSeq = b, seq
		}
	}
	res.Close()
	if rows != n || lastSeq != n {
		e.t.Fatalf("%d committed branches, the last numbered %d; want %d", rows, lastSeq, n)
	}
	items := map[string]uuid.UUID{}
	for _, s := range r.Steps {
		items[s.Step] = s.Item
	}
	got := map[string]core.RunContextEntry{}
	for _, c := range r.Context {
		got[c.Key] = c
	}
	for i := range n {
		if c, ok := got[fmt.Sprintf("own-%d", i)]; !ok || string(c.Value) != fmt.Sprint(i) || c.WrittenBy != items[fmt.Sprintf("w%d", i)] {
			e.t.Errorf("branch %d's own key = %+v (%v), want %d by its item", i, c, ok, i)
		}
	}
	w := got["winner"]
	if string(w.Value) != fmt.Sprint(last) || w.WrittenBy != items[fmt.Sprintf("w%d", last)] {
		e.t.Errorf("winner = %s by %s; want %d, of branch w%d (item %s), whose transaction committed last", w.Value, w.WrittenBy, last, last, items[fmt.Sprintf("w%d", last)])
	}
	e.t.Logf("branch w%d committed last of %d and won", last, n)
}
