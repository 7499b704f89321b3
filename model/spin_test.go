package model

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/conformance"
)

// requireName is what PLENUM_REQUIRE lists to make a missing checker a
// failure instead of a skip.
const requireName = "spin"

// needSpin skips t, or fails it where PLENUM_REQUIRE lists spin, when
// spin or gcc is not on PATH.
func needSpin(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"spin", "gcc"} {
		if _, err := exec.LookPath(tool); err != nil {
			msg := fmt.Sprintf("model: %s is not on PATH (Debian: apt-get install spin gcc)", tool)
			if conformance.Required(requireName) {
				t.Fatalf("%s; it is required: %s=%q lists %s", msg, conformance.RequireEnv, os.Getenv(conformance.RequireEnv), requireName)
			}
			t.Skipf("%s; %s=%s turns this skip into a failure", msg, conformance.RequireEnv, requireName)
		}
	}
}

// check is one run of the checker: the model generated with defines,
// compiled with cflags, and searched with panFlags.
type check struct {
	defines  []string
	cflags   []string
	panFlags []string
}

// result is what a run found.
type result struct {
	errors int
	states string
	out    string // pan's report
	trace  string // the counterexample, trimmed, when errors > 0
}

var (
	errorsLine = regexp.MustCompile(`errors: (\d+)`)
	statesLine = regexp.MustCompile(`(\d+) states, stored`)
)

// run generates, compiles and searches the model in a directory of its
// own, and replays the counterexample it finds.
func (c check) run(t *testing.T) result {
	t.Helper()
	dir := t.TempDir()
	src, err := os.ReadFile("plenum.pml")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plenum.pml"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	sh := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
		}
		return out.String()
	}
	sh("spin", append(append([]string{"-a"}, c.defines...), "plenum.pml")...)
	sh("gcc", append(append([]string{}, c.cflags...), "-o", "pan", "pan.c")...)
	var r result
	r.out = sh("./pan", c.panFlags...)
	m := errorsLine.FindStringSubmatch(r.out)
	if m == nil {
		t.Fatalf("pan reported no error count:\n%s", r.out)
	}
	r.errors, _ = strconv.Atoi(m[1])
	if s := statesLine.FindStringSubmatch(r.out); s != nil {
		r.states = s[1]
	}
	if r.errors > 0 {
		r.trace = trimTrace(sh("spin", append(append([]string{"-t", "-p"}, c.defines...), "plenum.pml")...))
	}
	return r
}

var (
	stepLine   = regexp.MustCompile(`^\s*\d+:\s+proc\s+(\d+) \((\w+):\d+\) plenum\.pml:(\d+) \(state \d+\)\s+\[(.*)\]$`)
	localReset = regexp.MustCompile(`^(ci|mt|i|t|o|page|seen|up|gotone|running) = 0$`)
	assigned   = regexp.MustCompile(`^[a-z]+(\[[^\]]*\])? = |^[a-z]+(\[[^\]]*\])?\+\+|^[a-z]+(\[[^\]]*\])?--|^assert`)
)

// trimTrace keeps of a replay the writes to the model's state, each with
// its process and line, and the failed assertion.
func trimTrace(replay string) string {
	const maxSteps = 80
	var b strings.Builder
	var steps []string
	for _, line := range strings.Split(replay, "\n") {
		if strings.Contains(line, "Error: assertion violated") || strings.Contains(line, "acceptance cycle") || strings.Contains(line, "START OF CYCLE") {
			fmt.Fprintf(&b, "%s\n", strings.TrimSpace(line))
			continue
		}
		m := stepLine.FindStringSubmatch(line)
		if m == nil || localReset.MatchString(m[4]) || !assigned.MatchString(m[4]) || strings.HasPrefix(m[4], "assert") {
			continue
		}
		stmt := m[4]
		if len(stmt) > 100 {
			stmt = stmt[:100] + "..."
		}
		steps = append(steps, fmt.Sprintf("  %s %-2s line %-4s %s", fmt.Sprintf("%-7s", m[2]), m[1], m[3], stmt))
	}
	if len(steps) > maxSteps {
		fmt.Fprintf(&b, "  (%d earlier steps left out)\n", len(steps)-maxSteps)
		steps = steps[len(steps)-maxSteps:]
	}
	for _, s := range steps {
		b.WriteString(s + "\n")
	}
	return b.String()
}

// zero is every budget of the model at zero: the protocol with no crash,
// stall, expiry, snooze, Extend, failure, hang, operator, Await or
// signal.
var zero = []string{"-DSTALLS=0", "-DEXPIRES=0", "-DCRASHES=0", "-DSNOOZES=0", "-DEXTENDS=0", "-DHANGS=0", "-DFAILS=0", "-DADMIN=0", "-DAWAITS=0", "-DSIGNALS=0"}

// with is zero with some budgets set.
func with(budgets ...string) []string {
	out := []string{}
	for _, z := range zero {
		name := strings.SplitN(z, "=", 2)[0]
		keep := true
		for _, b := range budgets {
			if strings.HasPrefix(b, name+"=") {
				keep = false
			}
		}
		if keep {
			out = append(out, z)
		}
	}
	return append(out, budgets...)
}

// TestModel_Holds is the bounded check: three workers, one reaper, an
// operator and the two-level fan-out, every interleaving of the protocol
// without faults searched exhaustively, and with one of each fault
// (crash, stall, lease expiry, snooze, Extend, failure, hang, cancel or
// revive, Await and signal) searched by bitstate hashing, which covers
// part of the states in a bounded time; then, by bitstate hashing too,
// the runs that reach what one fault of each cannot reach often: a
// waiter parked and woken by a signal, a fired barrier re-armed (cancel,
// then revive), and a lane of two places, which a claim can take, and
// set idle, while it holds a claimed item that is then handed back. The exhaustive searches of those are the deeper
// runs in README.md.
func TestModel_Holds(t *testing.T) {
	needSpin(t)
	for _, tc := range []struct {
		name string
		c    check
	}{
		{"no faults, exhaustive", check{defines: zero, cflags: []string{"-O1", "-DCOLLAPSE"}, panFlags: []string{"-m100000", "-w24"}}},
		{"one of each fault, bitstate", check{cflags: []string{"-O1", "-DBITSTATE"}, panFlags: []string{"-m100000", "-w22", "-k2"}}},
		{"signals and waits, bitstate", check{defines: with("-DAWAITS=1", "-DSIGNALS=1"), cflags: []string{"-O1", "-DBITSTATE"}, panFlags: []string{"-m100000", "-w22", "-k2"}}},
		{"re-arm, bitstate", check{defines: with("-DADMIN=2"), cflags: []string{"-O1", "-DBITSTATE"}, panFlags: []string{"-m100000", "-w22", "-k2"}}},
		{"a lane of two places, one of each fault, bitstate", check{defines: []string{"-DLIMIT=2"}, cflags: []string{"-O1", "-DBITSTATE"}, panFlags: []string{"-m100000", "-w22", "-k2"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := tc.c.run(t)
			if r.errors != 0 {
				t.Fatalf("the model fails:\n%s", r.trace)
			}
			t.Logf("%s states, no violation", r.states)
		})
	}
}

// bugs are the planted bugs, each with the faults it needs to show.
var bugs = []struct {
	define, what string
	budgets      []string
	// deep is set for a bug whose counterexample lies deep in a large
	// space (one crash: tens of millions of states): found by a
	// depth-first bitstate search in seconds, where the breadth-first
	// one, which gives the shortest trail, runs for minutes.
	deep bool
}{
	{"BUG_NO_TOKEN", "a completion checks the state, not the claim token", []string{"-DEXPIRES=1"}, false},
	{"BUG_HB_LEASE", "a heartbeat moves its owner's leases", []string{"-DHANGS=1"}, false},
	{"BUG_HANDOVER_EARLY", "a parent that does not complete in its seal's transaction hands its place over", nil, false},
	{"BUG_ARRIVAL_SPLIT", "an arrival is counted outside the item's transaction", []string{"-DCRASHES=1"}, true},
	{"BUG_REAP_LIVE", "the reaper removes an owner without checking it is stale", nil, false},
	{"BUG_SLOT_EARLY", "a slot is freed outside the item's transaction", nil, false},
	{"BUG_LANE_NOLOCK", "a lane's claimed items are counted without its row lock", nil, false},
	{"BUG_REARM_COUNTS", "a re-arm does not take back its revived children's failures", []string{"-DADMIN=2"}, true},
	{"BUG_REVIVE_DONE", "a re-arm revives its completed children too", []string{"-DADMIN=1", "-DFAILS=2"}, true},
	{"BUG_SIGNAL_NOLOCK", "a signal reads the waiters without the run's lock", []string{"-DAWAITS=1", "-DSIGNALS=1"}, false},
	{"BUG_HANDBACK_NOWAKE", "a claimed item handed back does not wake its lane, which a claim may have set idle", []string{"-DLIMIT=2", "-DSNOOZES=1"}, false},
}

// TestModel_CatchesPlantedBugs plants each bug in turn and expects the
// checker's counterexample, which it prints.
func TestModel_CatchesPlantedBugs(t *testing.T) {
	needSpin(t)
	for _, bug := range bugs {
		t.Run(bug.define, func(t *testing.T) {
			t.Parallel()
			c := check{
				defines:  append(with(bug.budgets...), "-D"+bug.define),
				cflags:   []string{"-O0", "-DBFS", "-DCOLLAPSE"},
				panFlags: []string{"-m100000", "-w24"},
			}
			if bug.deep {
				c.cflags = []string{"-O1", "-DBITSTATE"}
			}
			r := c.run(t)
			if r.errors == 0 {
				t.Fatalf("%s (%s): no counterexample in %s states", bug.define, bug.what, r.states)
			}
			t.Logf("%s: %s; counterexample:\n%s", bug.define, bug.what, r.trace)
		})
	}
}
