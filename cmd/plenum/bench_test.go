package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/internal/cmd/cmdline"

	"github.com/plenumdb/plenum/internal/cmd/bench"
)

func TestBench_CommandExitStatus(t *testing.T) {
	t.Parallel()
	code, out, errOut := cli(t, "bench", "--items", "40", "--batch", "7", "--workers", "2", "--flow")
	if code != cmdline.ExitOK || !strings.Contains(out, "ratio") || !strings.Contains(out, "Plenum bench on sqlite") ||
		!strings.Contains(out, "flow control") || !strings.Contains(out, "small key, flow keys") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// "plenum bench" takes the flags of the benchmark's code, which the
// program bench/plenum runs too (its test holds its usage to the same):
// the same usage, word for word.
func TestBench_UsageIsTheBenchProgramsUsage(t *testing.T) {
	t.Parallel()
	var want bytes.Buffer
	_ = bench.Run(t.Context(), []string{"-h"}, &want, &want)
	code, out, errOut := cli(t, "bench", "-h")
	if code != cmdline.ExitOK {
		t.Fatalf("bench -h: exit %d, want %d", code, cmdline.ExitOK)
	}
	if got := out + errOut; got != want.String() || !strings.Contains(got, "-pickups") {
		t.Errorf("bench -h printed:\n%s\nwant:\n%s", got, want.String())
	}
}
