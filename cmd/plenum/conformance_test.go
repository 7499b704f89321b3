package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/internal/cmd/cmdline"

	"github.com/plenumdb/plenum/conformance"
)

func TestConformance_List(t *testing.T) {
	t.Parallel()
	code, out, _ := cli(t, "conformance", "--list")
	if code != cmdline.ExitOK || strings.Join(conformance.Names(), "\n")+"\n" != out {
		t.Fatalf("exit %d, output:\n%s", code, out)
	}
}

func TestConformance_FlagErrors(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "c.db")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{nil, cmdline.ExitUsage, "missing --dialect (known: "},
		{[]string{"--dsn", "neither-url-nor-file"}, cmdline.ExitUsage, "give --dialect (known: "},
		{[]string{"--dialect", "sqlite"}, cmdline.ExitUsage, "missing --dsn"},
		{[]string{"--dialect", "oracle", "--dsn", "x"}, cmdline.ExitFailure, "oracle: invalid DSN"},
		{[]string{"--dialect", "db2", "--dsn", "x"}, cmdline.ExitUsage, `unknown dialect "db2"`},
		{[]string{"--dialect", "sqlite", "--dsn", path, "--scale", "0"}, cmdline.ExitUsage, "--scale 0"},
		{[]string{"--dialect", "sqlite", "--dsn", path, "--scale", "1.5"}, cmdline.ExitUsage, "--scale 1.5"},
		{[]string{"--dialect", "sqlite", "--dsn", path, "--run", "("}, cmdline.ExitUsage, "--run"},
		{[]string{"--dialect", "sqlite", "--dsn", path, "--run", "NoSuchGuarantee"}, cmdline.ExitUsage, "matches no guarantee"},
		{[]string{"--dialect", "sqlite", "--dsn", path, "--timeout", "-1s"}, cmdline.ExitUsage, "negative"},
		{[]string{"--dialect", "sqlite", "--dsn", path, "--max-conns", "3"}, cmdline.ExitUsage, "--max-conns 3"},
		{[]string{"--dialect", "sqlite", "--dsn", ":memory:"}, cmdline.ExitFailure, "in-memory"},
	} {
		code, _, errOut := cli(t, append([]string{"conformance"}, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", c.args, code, errOut, c.code, c.want)
		}
	}
}

// The plan selects the suite's subtests under the one top-level test and
// passes the options on as test flags.
func TestConformance_Plan(t *testing.T) {
	t.Parallel()
	o := conformanceOptions{Database: cmdline.Database{Dialect: "sqlite", DSN: filepath.Join(t.TempDir(), "c.db")}, Run: "FanIn", Verbose: true,
		Scale: 0.5, Serial: true, FailFast: true, MaxConns: 25}
	plan, err := conformancePlan(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	cfg, args := plan.Config, plan.Args
	if !strings.HasPrefix(plan.Version, "SQLite 3.") {
		t.Errorf("server version %q, want SQLite 3.x", plan.Version)
	}
	if cfg.Dialect.Name() != "sqlite" || cfg.Scale != 0.5 || !cfg.Serial {
		t.Errorf("config %+v", cfg)
	}
	for _, want := range []string{"-test.run=^Conformance$/FanIn", "-test.v=true", "-test.failfast=true", "-test.timeout=0s", "-test.parallel=1"} {
		if !slices.Contains(args, want) {
			t.Errorf("test args %q lack %q", args, want)
		}
	}
	a, b := cfg.Open(t), cfg.Open(t)
	if a == b {
		t.Error("Config.Open returned the same handle twice; the suite needs a new one per call")
	}
	if err := a.PingContext(t.Context()); err != nil {
		t.Error(err)
	}
	if n := a.Stats().MaxOpenConnections; n != connsPerGuarantee {
		t.Errorf("a guarantee's handle opens up to %d connections, want %d", n, connsPerGuarantee)
	}
	if plan.Selected != 6 {
		t.Errorf("--run FanIn selects %d guarantees, want the 6 FanIn_ ones", plan.Selected)
	}

	o.Run, o.Serial = "Claim_Order|FanIn/sub", false
	if plan, err = conformancePlan(t.Context(), o); err != nil {
		t.Fatal(err)
	}
	args = plan.Args
	// 25 connections: two guarantees of 10 at once.
	for _, want := range []string{"-test.run=^Conformance$/Claim_Order|^Conformance$/FanIn/sub", "-test.parallel=2"} {
		if !slices.Contains(args, want) {
			t.Errorf("test args %q lack %q", args, want)
		}
	}
}

// The command runs the suite for real, outside "go test": in a subprocess,
// because it ends its process with the suite's exit status.
func TestConformance_RunsSuiteOnSQLite(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs part of the conformance suite in a subprocess")
	}
	path := filepath.Join(t.TempDir(), "c.db")
	args, _ := json.Marshal([]string{"conformance", "--dialect", "sqlite", "--dsn", path, "-v", "--run", "Claim_Order|FanIn_NestedFireInOrder"})
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PLENUM_CLI_ARGS="+string(args))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("conformance: %v\n%s", err, out)
	}
	for _, want := range []string{"--- PASS: Conformance/Claim_Order", "--- PASS: Conformance/FanIn_NestedFireInOrder", "\nPASS\n"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "Recovery_") {
		t.Errorf("--run did not select:\n%s", out)
	}
}

func TestSplitTopLevel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		sep  byte
		want []string
	}{
		{"A|B", '|', []string{"A", "B"}},
		{"(A|B)/C", '|', []string{"(A|B)/C"}},
		{"(A|B)/C", '/', []string{"(A|B)", "C"}},
		{`A\|B|[|/]`, '|', []string{`A\|B`, "[|/]"}},
		{"", '|', []string{""}},
	} {
		if got := splitTopLevel(c.in, c.sep); !slices.Equal(got, c.want) {
			t.Errorf("splitTopLevel(%q, %q) = %q, want %q", c.in, c.sep, got, c.want)
		}
	}
}
