package main

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// slowestShown is how many of the longest top-level tests the summary
// lists: CI has a time budget, and its log should say where it went.
const slowestShown = 12

// timing is one top-level test's wall time, as "go test -json" reports it
// when the test ends. A parallel test's time includes the time it waited
// for its turn and for its subtests.
type timing struct {
	pkg, test string
	elapsed   time.Duration
}

// slowest keeps the top-level tests' times.
type slowest struct {
	tests []timing
}

// slowestFrom is the shortest time listed: a test under a second does
// not matter to the budget.
const slowestFrom = time.Second

// add records a test that ended; subtests are left out, their time is in
// their parent's.
func (s *slowest) add(pkg, test string, elapsed float64) {
	d := time.Duration(elapsed * float64(time.Second))
	if test == "" || strings.Contains(test, "/") || d < slowestFrom {
		return
	}
	s.tests = append(s.tests, timing{pkg: pkg, test: test, elapsed: d})
}

// report prints the longest tests, longest first.
func (s *slowest) report(r *report) {
	if len(s.tests) == 0 {
		return
	}
	sort.SliceStable(s.tests, func(i, j int) bool { return s.tests[i].elapsed > s.tests[j].elapsed })
	n := min(slowestShown, len(s.tests))
	fmt.Fprintf(r.w, "\nThe %d longest tests (wall time, waits included):\n", n)
	for _, t := range s.tests[:n] {
		fmt.Fprintf(r.w, "  %7.1fs  %s %s\n", t.elapsed.Seconds(), t.pkg, t.test)
	}
}
