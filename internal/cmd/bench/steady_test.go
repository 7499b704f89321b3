package bench

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/internal/cmd/cmdline"
)

// A tiny steady state runs the producer and the runtime together, and
// reports each round's rate and pickup latency. It asserts no speed.
func TestBench_SteadyStateTinyRun(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	o := benchOptions{Database: cmdline.Database{DB: filepath.Join(t.TempDir(), "bench.db")}, Items: 1, Batch: 10, Workers: 1,
		Scale:  scaleOptions{NoTable: true},
		Steady: steadyOptions{Enabled: true, Warmup: 100 * time.Millisecond, Measure: 400 * time.Millisecond, Rounds: 2}}
	// Each window runs on until it saw a completion and the last a pickup
	// (waitFlowing): the bound is for a side that never gets there.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	rep, err := runBench(ctx, &out, o)
	if err != nil {
		t.Fatalf("runBench: %v\n%s", err, out.String())
	}
	if rep.Steady == nil || len(rep.Steady.Rounds) != 2 {
		t.Fatalf("steady state %+v, want 2 rounds\n%s", rep.Steady, out.String())
	}
	for i, r := range rep.Steady.Rounds {
		if len(r.Windows) != 1 || r.Rate <= 0 || r.Pickups <= 0 || r.P50 <= 0 || r.P50 > r.P95 || r.P95 > r.P99 {
			t.Errorf("round %d: %+v, want one window, a rate, pickups and 0 < p50 <= p95 <= p99", i+1, r)
		}
		if !strings.Contains(out.String(), steadyLine(r)) {
			t.Errorf("output lacks round %d:\n%s", i+1, out.String())
		}
	}
	if !strings.Contains(out.String(), steadyAbout(o.Steady)) {
		t.Errorf("output lacks the scenario:\n%s", out.String())
	}
}

func TestSteadyOptions_RefusesNoMeasuredPeriod(t *testing.T) {
	t.Parallel()
	if err := (steadyOptions{Enabled: true, Measure: 0, Rounds: 1}).validate(); err == nil {
		t.Error("a measured period of 0 was accepted")
	}
}
