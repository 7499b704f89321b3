package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/internal/cmd/cmdline"
)

// TestMain lets a test run the command in a subprocess of the test binary
// (PLENUM_CLI_ARGS holds its arguments as a JSON list): the conformance
// command ends the process, so it cannot run in the test's own. It fails
// the run if the tests left a file in the package directory.
func TestMain(m *testing.M) {
	if raw := os.Getenv("PLENUM_CLI_ARGS"); raw != "" {
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			os.Stderr.WriteString("bad PLENUM_CLI_ARGS: " + err.Error() + "\n")
			os.Exit(3)
		}
		os.Exit(run(context.Background(), args, os.Stdout, os.Stderr))
	}
	os.Exit(checkCleanDir(m))
}

// cli runs a command line in-process and returns its exit status and
// output.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(t.Context(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestHelpListsEveryCommand(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		code, out, _ := cli(t, args...)
		if code != cmdline.ExitOK {
			t.Fatalf("%v: exit %d", args, code)
		}
		for _, c := range commands() {
			if !strings.Contains(out, c.name) {
				t.Errorf("%v does not mention %q:\n%s", args, c.name, out)
			}
		}
	}
}

func TestNoArgumentsIsUsageError(t *testing.T) {
	t.Parallel()
	code, _, errOut := cli(t)
	if code != cmdline.ExitUsage || !strings.Contains(errOut, "Usage:") {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
}

func TestUnknownCommandIsUsageError(t *testing.T) {
	t.Parallel()
	code, _, errOut := cli(t, "frobnicate")
	if code != cmdline.ExitUsage || !strings.Contains(errOut, `unknown command "frobnicate"`) {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
}

// Every command answers -h with its flags, exit status 0, and "plenum help
// <command>" prints the same on stdout.
func TestCommandHelp(t *testing.T) {
	t.Parallel()
	for _, c := range commands() {
		if c.name == "help" {
			continue
		}
		code, _, errOut := cli(t, c.name, "-h")
		if code != cmdline.ExitOK || !strings.Contains(errOut, "Usage: plenum "+c.name) {
			t.Errorf("%s -h: exit %d, stderr:\n%s", c.name, code, errOut)
		}
		code, out, _ := cli(t, "help", c.name)
		if code != cmdline.ExitOK || !strings.Contains(out, "Usage: plenum "+c.name) {
			t.Errorf("help %s: exit %d, stdout:\n%s", c.name, code, out)
		}
	}
	for _, sub := range []string{"gen", "up"} {
		code, _, errOut := cli(t, "migrations", sub, "-h")
		if code != cmdline.ExitOK || !strings.Contains(errOut, "-dialect") {
			t.Errorf("migrations %s -h: exit %d, stderr:\n%s", sub, code, errOut)
		}
	}
	code, _, errOut := cli(t, "bench", "-h")
	for _, want := range []string{"-dialect", "-dsn", "-db", "(" + strings.Join(cmdline.Openable(), ", ") + ")"} {
		if code != cmdline.ExitOK || !strings.Contains(errOut, want) {
			t.Errorf("bench -h: exit %d, no %q in stderr:\n%s", code, want, errOut)
		}
	}
	if code, _, _ := cli(t, "help", "nope"); code != cmdline.ExitUsage {
		t.Errorf("help nope: exit %d, want %d", code, cmdline.ExitUsage)
	}
}

func TestBadFlagsAreUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"demo", "--no-such-flag"},
		{"demo", "extra"},
		{"demo", "--children", "0"},
		{"demo", "--children", "lots"},
		{"demo", "--workers", "2", "--crashes", "3"},
		{"demo", "--batch", "0"},
		{"demo", "--prefix", "Bad-Prefix"},
		{"bench", "--items", "-1"},
		{"bench", "--workers", "0"},
		{"bench", "--dialect", "nope"},
		{"bench", "--dialect", "postgres"}, // not linked yet, or linked and missing --dsn
		{"bench", "--db", filepath.Join(dir, "a.db"), "--dsn", filepath.Join(dir, "b.db")},
		{"inspect"},
		{"inspect", "--db", filepath.Join(dir, "x.db"), "--limit", "0"},
		{"migrations"},
		{"migrations", "sideways"},
	} {
		code, _, errOut := cli(t, args...)
		if code != cmdline.ExitUsage {
			t.Errorf("%q: exit %d, want %d; stderr:\n%s", args, code, cmdline.ExitUsage, errOut)
		}
		if errOut == "" {
			t.Errorf("%q: nothing on stderr", args)
		}
	}
	assertEmptyDir(t, dir)
}
