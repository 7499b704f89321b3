package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/internal/cmd/bench"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
)

// The program takes the flags "plenum bench" takes: its usage is the one
// bench.Run prints, which cmd/plenum's test holds "plenum bench -h" to as
// well.
func TestProgram_UsageIsTheBenchCommands(t *testing.T) {
	t.Parallel()
	var want bytes.Buffer
	_ = bench.Run(t.Context(), []string{"-h"}, &want, &want)
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"-h"}, &out, &errOut); code != cmdline.ExitOK {
		t.Fatalf("-h: exit %d, want %d", code, cmdline.ExitOK)
	}
	if got := out.String() + errOut.String(); got != want.String() || !strings.Contains(got, "-pickups") {
		t.Errorf("-h printed:\n%s\nwant:\n%s", got, want.String())
	}
}

// A bad flag is a usage error, exit status 2, as in "plenum bench".
func TestProgram_BadFlagIsUsageError(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--no-such-flag"}, {"--items", "0"}, {"positional"}} {
		var out, errOut bytes.Buffer
		if code := run(t.Context(), args, &out, &errOut); code != cmdline.ExitUsage || errOut.Len() == 0 {
			t.Errorf("%q: exit %d, stderr %q; want %d and a message", args, code, errOut.String(), cmdline.ExitUsage)
		}
	}
}

// A tiny run on a SQLite file measures both sides, and the flow rows,
// and exits 0.
func TestProgram_TinyRunOnSQLite(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "bench.db")
	var out, errOut bytes.Buffer
	code := run(t.Context(), []string{"--db", db, "--items", "40", "--batch", "7", "--workers", "2", "--pickups", "2", "--flow"}, &out, &errOut)
	if code != cmdline.ExitOK || !strings.Contains(out.String(), "Plenum bench on sqlite: "+db) || !strings.Contains(out.String(), "ratio") ||
		!strings.Contains(out.String(), "flow control") || !strings.Contains(out.String(), "small key, flow keys") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
}
