package dashboard_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/dashboard"
	"github.com/plenumdb/plenum/pipeline"
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
	approve := pipeline.Await("approve", "go", 0, func(_ context.Context, n int, _ struct{}, _ bool) (int, error) { return n, nil })
	p, err := pipeline.Define("squares", pipeline.Then(squares("squares-of"), approve))
	if err != nil {
		t.Fatal(err)
	}
	eng := runPipelines(t, ctx, st, p)
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
