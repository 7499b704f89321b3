package main

import (
	"fmt"
	"sort"
	"strings"
)

// A package that runs past go test's -timeout panics from inside the tests
// still running. Those tests never end: "go test -json" gives them no
// pass or fail, and their output, the panic with every goroutine's stack,
// belongs to them. unfinished keeps track of them so that a failed package
// prints their output too, and the run ends with which tests were running
// when each package timed out: in a long log that is the line to find.
type unfinished struct {
	started map[string][]string // package -> tests that began, in order
	ended   map[string]bool     // package + test
	// stuck maps a package that timed out to its panic line and the
	// tests it lists as running; catching marks a list still being read.
	stuck    map[string][]string
	catching map[string]bool
}

func newUnfinished() unfinished {
	return unfinished{started: map[string][]string{}, ended: map[string]bool{}, stuck: map[string][]string{}, catching: map[string]bool{}}
}

func (u *unfinished) begin(pkg, test string) {
	u.started[pkg] = append(u.started[pkg], test)
}

func (u *unfinished) end(pkg, test string) {
	u.ended[pkg+"\x00"+test] = true
}

// still returns the package's tests that began and never ended.
func (u *unfinished) still(pkg string) []string {
	var out []string
	for _, t := range u.started[pkg] {
		if !u.ended[pkg+"\x00"+t] {
			out = append(out, t)
		}
	}
	return out
}

// watch reads a line of a package's output for the timeout panic,
//
//	panic: test timed out after 10m0s
//		running tests:
//			TestX (10m0s)
//
// and keeps the panic line and the running tests.
func (u *unfinished) watch(pkg, line string) {
	line = strings.TrimRight(line, "\n")
	switch {
	case strings.HasPrefix(line, "panic: test timed out"):
		u.stuck[pkg] = []string{line}
		u.catching[pkg] = true
	case !u.catching[pkg]:
	case strings.HasPrefix(line, "\t\t"):
		u.stuck[pkg] = append(u.stuck[pkg], strings.TrimSpace(line))
	case strings.TrimSpace(line) == "running tests:":
	default:
		u.catching[pkg] = false
	}
}

// report prints, for each package that timed out, its panic line and the
// tests that were running.
func (u *unfinished) report(r *report) {
	if len(u.stuck) == 0 {
		return
	}
	pkgs := make([]string, 0, len(u.stuck))
	for p := range u.stuck {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	fmt.Fprintln(r.w, "\nTimed out, with the tests that were still running (their stacks are above):")
	for _, p := range pkgs {
		fmt.Fprintf(r.w, "  %s: %s\n", p, u.stuck[p][0])
		for _, t := range u.stuck[p][1:] {
			fmt.Fprintf(r.w, "    %s\n", t)
		}
	}
}
