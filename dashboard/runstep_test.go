package dashboard_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/dashboard"
	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/worker"
)

// TestRun_TreeNamesPipelineSteps runs a pipeline (an expand of squares,
// their collapse, then an await) until it waits, and checks that the
// run's tree labels each item with its step's name and role rather than
// the pipeline's kind, which every item shares, and that the facts count
// one barrier in the singular.
func TestRun_TreeNamesPipelineSteps(t *testing.T) {
	t.Parallel()
	st := openStore(t, databases[0])
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cfg := worker.Config{Queues: map[string]worker.QueueConfig{"pipe": {MaxWorkers: 4}}, PollInterval: 20 * time.Millisecond}
	worker.FitPool(st, cfg)
	w, err := worker.New(st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := pipeline.New(st, w, pipeline.EngineOptions{Queue: "pipe"})
	if err != nil {
		t.Fatal(err)
	}
	upTo := func(_ context.Context, n int) ([]int, error) { return []int{1, 2, 3}[:n], nil }
	square := pipeline.Step("square", func(_ context.Context, n int) (int, error) { return n * n, nil })
	sum := func(ctx context.Context, r *pipeline.Results[int]) (int, error) {
		t := 0
		return t, r.Each(ctx, func(x pipeline.Result[int]) error { t += x.Value; return nil })
	}
	approve := pipeline.Await("approve", "go", 0, func(_ context.Context, n int, _ struct{}, _ bool) (int, error) { return n, nil })
	p, err := pipeline.Define("squares", pipeline.Then(pipeline.Expand("squares-of", upTo, square, sum), approve))
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.Register(p); err != nil {
		t.Fatal(err)
	}
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Stop(context.Background()) }()
	run, err := p.Trigger(ctx, eng, 3)
	if err != nil {
		t.Fatal(err)
	}
	for {
		r, err := eng.Get(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		if r.State == pipeline.StateWaiting {
			break
		}
		if ctx.Err() != nil || r.State != pipeline.StateRunning {
			t.Fatalf("the run is %s, want it waiting for its signal", r.State)
		}
		time.Sleep(20 * time.Millisecond)
	}

	c := serve(t, newDashboard(t, st, dashboard.Options{}), "")
	_, body := c.get("/runs/" + run.String())
	for _, want := range []string{
		`<span class="tag role">expand</span> <span class="step">squares-of</span>`,
		`<span class="tag role">collapse</span> <span class="step">squares-of</span>`,
		`<span class="tag role">await</span> <span class="step">approve</span>`,
		`<span class="tag role">step</span> <span class="step">square</span>`,
		"1 barrier</dd>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the run's page lacks %s", want)
		}
	}
	if n := len(regexp.MustCompile(`<span class="step">square</span>`).FindAllString(body, -1)); n != 3 {
		t.Errorf("the tree shows %d square steps, want 3", n)
	}
	if strings.Contains(body, `class="kind">pipeline:squares<`) {
		t.Error("the tree still labels pipeline items with the pipeline's kind")
	}
}
