package dashboard_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/dashboard"
	"github.com/plenumdb/plenum/pipeline"
)

// TestRunGraph_OverlaysEachStepsState runs a pipeline (a step, an
// expand of three squares and its collapse, an await) on SQLite until it
// waits for its signal, and checks that the run's page draws the
// pipeline's graph with each box's state, items, attempts and, for the
// expand, its arrivals; and that a run of a pipeline the dashboard was
// not given shows no graph but a note.
func TestRunGraph_OverlaysEachStepsState(t *testing.T) {
	t.Parallel()
	st := openStore(t, databases[0])
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	inc := pipeline.Step("prepare", func(_ context.Context, n int) (int, error) { return n, nil })
	approve := pipeline.Await("approve", "go", 0, func(_ context.Context, n int, _ struct{}, _ bool) (int, error) { return n, nil })
	after := pipeline.Step("after", func(_ context.Context, n int) (int, error) { return n, nil })
	p, err := pipeline.Define("graphed", pipeline.Then(inc, pipeline.Then(squares("squares"), pipeline.Then(approve, after))))
	if err != nil {
		t.Fatal(err)
	}
	other, err := pipeline.Define("ungraphed", pipeline.Step("one", func(_ context.Context, n int) (int, error) { return n, nil }))
	if err != nil {
		t.Fatal(err)
	}
	eng := runPipelines(t, ctx, st, p, other)
	run, err := p.Trigger(ctx, eng, 3)
	if err != nil {
		t.Fatal(err)
	}
	lone, err := other.Trigger(ctx, eng, 1)
	if err != nil {
		t.Fatal(err)
	}
	awaitWaiting(t, ctx, eng, run)
	g, err := pipeline.Describe(p)
	if err != nil {
		t.Fatal(err)
	}
	c := serve(t, newDashboard(t, st, dashboard.Options{Pipelines: []pipeline.Graph{g}}), "")
	_, body := c.get("/runs/" + run.String())
	for _, want := range []string{
		// The boxes, coloured by their state.
		`data-node="prepare" data-role="" data-kind="step" data-state="completed"`,
		`data-node="squares" data-role="" data-kind="expand" data-state="completed"`,
		`data-node="square" data-role="" data-kind="step" data-state="completed"`,
		`data-node="squares" data-role="collapse" data-kind="expand" data-state="completed"`,
		`data-node="approve" data-role="" data-kind="await" data-state="waiting"`,
		`data-node="after" data-role="" data-kind="step" data-state="none"`,
		// Their lines: the children's count and attempts, the arrivals.
		`>3 completed</text>`, `>3 attempts`, `>3/3 arrived</text>`, `>not reached</text>`,
		// The table under the graph.
		`<tr data-node="square" data-role="" data-state="completed"><td class="step">square</td><td>step</td>`,
		`3 arrived / 3 expected`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the run's page lacks %s", want)
		}
	}
	if strings.Contains(body, `id="graph-missing"`) {
		t.Error("the run of a given pipeline says it has no graph")
	}
	_, body = c.get("/runs/" + lone.String())
	if !strings.Contains(body, `id="graph-missing"`) || strings.Contains(body, `<svg id="graph"`) {
		t.Error("the run of a pipeline not given: want the note and no graph")
	}
	if !strings.Contains(body, `id="tree"`) {
		t.Error("the run of a pipeline not given lost its tree of steps")
	}
}

// TestRunGraph_OnlyOfTheRunsVersion: a run of version 1 of a pipeline
// whose version 2 the dashboard was given shows its version and a note,
// not version 2's graph; a run of version 2 shows the graph.
func TestRunGraph_OnlyOfTheRunsVersion(t *testing.T) {
	t.Parallel()
	st := openStore(t, databases[0])
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	hold := pipeline.Await("hold", "go", 0, func(_ context.Context, n int, _ struct{}, _ bool) (int, error) { return n, nil })
	v1, err := pipeline.Define("versioned", pipeline.Then(hold, pipeline.Step("old", func(_ context.Context, n int) (int, error) { return n, nil })))
	if err != nil {
		t.Fatal(err)
	}
	hold2 := pipeline.Await("hold", "go", 0, func(_ context.Context, n int, _ struct{}, _ bool) (int, error) { return n, nil })
	v2, err := pipeline.Define("versioned", pipeline.Then(pipeline.Step("new", func(_ context.Context, n int) (int, error) { return n, nil }), hold2),
		pipeline.Options{Version: 2})
	if err != nil {
		t.Fatal(err)
	}
	eng := runPipelines(t, ctx, st, v1, v2)
	old, err := v1.Trigger(ctx, eng, 1)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := v2.Trigger(ctx, eng, 1)
	if err != nil {
		t.Fatal(err)
	}
	awaitWaiting(t, ctx, eng, old, fresh)
	g, err := pipeline.Describe(v2)
	if err != nil {
		t.Fatal(err)
	}
	c := serve(t, newDashboard(t, st, dashboard.Options{Pipelines: []pipeline.Graph{g}}), "")
	_, body := c.get("/runs/" + old.String())
	if !strings.Contains(body, `<dd id="run-version">1</dd>`) || !strings.Contains(body, `id="graph-other-version"`) || strings.Contains(body, `data-node="new"`) {
		t.Errorf("the run of version 1: want its version and the note, not version 2's graph:\n%s", body)
	}
	_, body = c.get("/runs/" + fresh.String())
	if !strings.Contains(body, `<dd id="run-version">2</dd>`) || !strings.Contains(body, `data-node="new" data-role="" data-kind="step" data-state="completed"`) {
		t.Errorf("the run of version 2: want its version and its graph:\n%s", body)
	}
}

// awaitWaiting waits until each of runs waits for its signal, failing t
// if one ends otherwise or ctx ends first.
func awaitWaiting(t *testing.T, ctx context.Context, eng *pipeline.Engine, runs ...uuid.UUID) {
	t.Helper()
	for _, run := range runs {
		for {
			r, err := eng.Get(ctx, run)
			if err != nil {
				t.Fatal(err)
			}
			if r.State == pipeline.StateWaiting {
				break
			}
			if ctx.Err() != nil || r.State != pipeline.StateRunning {
				t.Fatalf("run %s is %s, want it waiting for its signal", run, r.State)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
