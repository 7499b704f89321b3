// Command gotest runs "go test" and then says which database suites ran
// and which were skipped, with how to enable each skipped one: "go test"
// alone prints only "ok" for a package whose server suites all skipped,
// which reads as if PostgreSQL and MySQL had been tested. It is the test
// command of the README and of CI:
//
//	go run ./internal/cmd/gotest -race -count=1 ./...
//
// Its arguments go to "go test" as they are, with a -timeout of 25
// minutes per package where they set none, with -race, SQLite's engine
// left uninstrumented where they set no -gcflags (testArgs), and a lone "./..." listed as
// its packages, longest first by the last run's times (order.go). It runs "go test -json",
// prints what "go test" would print (the package lines, and the output of
// failed tests and packages, and of the tests a timeout left running),
// then the summary, and exits with go test's status. The summary ends, where
// a package ran past -timeout, with the tests it was running.
//
// The summary reads the lines the conformance harness logs: "conformance:
// NAME: testing the database of WHERE" where a suite finds its database,
// "conformance: server: PRODUCT VERSION" where the suite then runs on it,
// and "conformance: NAME: would add WHAT" and "conformance: no NAME
// database: HOW" where it skips. So each suite that ran shows the server
// and version it ran on (the mysql suite on a MariaDB says so), and each
// skipped one what running it would add.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// event is one line of "go test -json" (see "go doc test2json" and "go
// help buildjson").
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	ImportPath string
	Elapsed    float64 // seconds, on a test's or package's end
}

// defaultTimeout is the -timeout given to go test when the arguments set
// none: go test's own ten minutes per package are too few for the
// database packages on a machine shared with other work, and a package
// cut off there reports a panic, not the test that was slow.
const defaultTimeout = "25m"

// uninstrumented are the packages that -race leaves uninstrumented where
// args set no -gcflags: SQLite's engine and the C library beneath it,
// both Go translated from C by modernc.org. They are most of a SQLite
// test's time under the race detector (the SQLite conformance suite: 124 s
// of CPU instrumented, 27 s not), and no race in them could be Plenum's:
// SQLite serialises its own work on a connection. Plenum's code, the
// driver's Go side (modernc.org/sqlite, where a connection shared between
// goroutines would show) and every other package stay instrumented.
var uninstrumented = []string{"modernc.org/sqlite/lib", "modernc.org/libc/..."}

// testArgs is what run passes to go test: args, with -json first,
// defaultTimeout where args set no -timeout, and with -race and no
// -gcflags in args, a -gcflags that turns the race detector off for the
// uninstrumented packages.
func testArgs(args []string) []string {
	out := []string{"test", "-json"}
	timed, race, gcflags := false, false, false
	for _, a := range args {
		if a == "--" {
			break // what follows goes to the test binaries
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, value, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "timeout", "test.timeout":
			timed = true
		case "race":
			on, err := strconv.ParseBool(value)
			race = value == "" || (err == nil && on)
		case "gcflags":
			gcflags = true
		}
	}
	if !timed {
		out = append(out, "-timeout", defaultTimeout)
	}
	if race && !gcflags {
		for _, p := range uninstrumented {
			out = append(out, "-gcflags="+p+"=-race=false")
		}
	}
	return append(out, args...)
}

func run(args []string, stdout, stderr io.Writer) int {
	times := timesFile()
	cmd := exec.Command("go", testArgs(ordered(args, timesOr(loadTimes(times))))...)
	cmd.Stderr = stderr
	cmd.Stdin = os.Stdin
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(stderr, "gotest:", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, "gotest:", err)
		return 2
	}
	r := newReport(stdout)
	r.verbose = verbose(args)
	r.read(out)
	err = cmd.Wait()
	if whole(args) {
		saveTimes(times, r.packageTimes)
	}
	r.summary()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	fmt.Fprintln(stderr, "gotest:", err)
	return 2
}

var (
	ranLine    = regexp.MustCompile(`conformance: (\S+): testing the database of (.+)$`)
	serverLine = regexp.MustCompile(`conformance: server: (.+)$`)
	addsLine   = regexp.MustCompile(`conformance: (\S+): would add (.+)$`)
	skipLine   = regexp.MustCompile(`conformance: no (\S+) database: (.+)$`)
)

// suite is what one database's tests did.
type suite struct {
	where   map[string]bool // where its database came from
	servers map[string]bool // the servers (product and version) its tests ran on
	how     string          // how to enable it, from a skip
	adds    string          // what running it would add, from a skip
	ran     map[string]bool // package test IDs that found the database
	skipped map[string]bool
	failed  map[string]bool
}

// verbose reports whether args ask go test for -v output.
func verbose(args []string) bool {
	for _, a := range args {
		if a == "--" {
			break // what follows goes to the test binaries
		}
		switch strings.TrimLeft(a, "-") {
		case "v", "v=true", "test.v", "test.v=true":
			return true
		}
	}
	return false
}

// report prints test output as go test would, and keeps what the summary
// needs.
type report struct {
	w       io.Writer
	verbose bool                // print every line, as go test -v does
	lines   map[string][]string // package + test -> its output
	failed  map[string][]string // package -> failed tests, in order
	suites  map[string]*suite
	// seen maps package + test to the database names its output named.
	seen map[string][]string
	// left is the tests that never ended, as when a package times out.
	left unfinished
	// slow is the top-level tests' times, for the summary.
	slow slowest
	// packageTimes is each package's time, for the next run's order.
	packageTimes map[string]float64
}

func newReport(w io.Writer) *report {
	return &report{w: w, packageTimes: map[string]float64{}, lines: map[string][]string{}, failed: map[string][]string{}, suites: map[string]*suite{}, seen: map[string][]string{}, left: newUnfinished()}
}

func (r *report) suite(name string) *suite {
	s := r.suites[name]
	if s == nil {
		s = &suite{where: map[string]bool{}, servers: map[string]bool{}, ran: map[string]bool{}, skipped: map[string]bool{}, failed: map[string]bool{}}
		r.suites[name] = s
	}
	return s
}

func (r *report) read(in io.Reader) {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			fmt.Fprintln(r.w, sc.Text()) // not an event: pass it on
			continue
		}
		r.handle(e)
	}
}

func (r *report) handle(e event) {
	id := e.Package + "\x00" + e.Test
	switch e.Action {
	case "build-output":
		fmt.Fprint(r.w, e.Output)
	case "run":
		r.left.begin(e.Package, e.Test)
	case "output":
		if r.verbose {
			fmt.Fprint(r.w, e.Output)
		}
		r.lines[id] = append(r.lines[id], e.Output)
		r.note(id, e.Output)
		r.left.watch(e.Package, e.Output)
	case "skip", "pass", "fail":
		if e.Test == "" {
			if e.Action != "skip" {
				r.packageTimes[e.Package] = e.Elapsed
			}
			r.endPackage(e)
			return
		}
		r.left.end(e.Package, e.Test)
		r.slow.add(e.Package, e.Test, e.Elapsed)
		for _, name := range r.seen[id] {
			s := r.suite(name)
			switch e.Action {
			case "fail":
				s.failed[id] = true
			case "skip":
				s.skipped[id] = true
			default:
				s.ran[id] = true
			}
		}
		if e.Action == "fail" {
			r.failed[e.Package] = append(r.failed[e.Package], e.Test)
		}
	}
}

// note records the database a line of test output names.
func (r *report) note(id, line string) {
	line = strings.TrimRight(line, "\n")
	if m := ranLine.FindStringSubmatch(line); m != nil {
		r.suite(m[1]).where[m[2]] = true
		r.seen[id] = append(r.seen[id], m[1])
	} else if m := serverLine.FindStringSubmatch(line); m != nil {
		// The suite's test named its database first, in this same test.
		for _, name := range r.seen[id] {
			r.suite(name).servers[m[1]] = true
		}
	} else if m := addsLine.FindStringSubmatch(line); m != nil {
		r.suite(m[1]).adds = m[2]
	} else if m := skipLine.FindStringSubmatch(line); m != nil {
		r.suite(m[1]).how = m[2]
		r.seen[id] = append(r.seen[id], m[1])
	}
}

// endPackage prints a package's result as go test does: its "ok" line
// when it passed, every failed test's output and the package's own when
// it failed.
func (r *report) endPackage(e event) {
	if r.verbose {
		return // every line was printed as it came
	}
	pkgID := e.Package + "\x00"
	own := r.lines[pkgID]
	if e.Action != "fail" {
		for _, l := range own {
			if strings.HasPrefix(l, "ok  ") || strings.HasPrefix(l, "?   ") {
				fmt.Fprint(r.w, l)
			}
		}
		return
	}
	// The failed tests, then those that never ended: a package that timed
	// out has its panic and stacks there.
	for _, t := range append(r.failed[e.Package], r.left.still(e.Package)...) {
		for _, l := range r.lines[e.Package+"\x00"+t] {
			if !strings.HasPrefix(strings.TrimSpace(l), "=== ") {
				fmt.Fprint(r.w, l)
			}
		}
	}
	for _, l := range own {
		if !strings.HasPrefix(l, "=== ") {
			fmt.Fprint(r.w, l)
		}
	}
}

// summary prints which database suites ran, failed or skipped, the
// longest tests, and last which tests were running in a package that
// timed out.
func (r *report) summary() {
	r.suiteSummary()
	r.slow.report(r)
	r.left.report(r)
}

// suiteSummary prints which database suites ran, failed or skipped.
func (r *report) suiteSummary() {
	if len(r.suites) == 0 {
		return
	}
	names := make([]string, 0, len(r.suites))
	width := 0
	for n := range r.suites {
		names = append(names, n)
		width = max(width, len(n))
	}
	sort.Strings(names)
	fmt.Fprintln(r.w, "\nDatabase suites (SQLite is embedded and always runs):")
	var howTo []string
	for _, n := range names {
		s := r.suites[n]
		var parts []string
		if k := len(s.ran); k > 0 {
			parts = append(parts, plural(k, "test")+" ran")
		}
		if k := len(s.failed); k > 0 {
			parts = append(parts, plural(k, "test")+" FAILED")
		}
		if k := len(s.skipped); k > 0 {
			parts = append(parts, plural(k, "test")+" SKIPPED")
		}
		state := "ran"
		switch {
		case len(s.failed) > 0:
			state = "FAILED"
		case len(s.ran) == 0 && len(s.skipped) > 0:
			state = "SKIPPED"
		case len(s.skipped) > 0:
			state = "partly skipped"
		}
		line := fmt.Sprintf("  %-*s  %-14s  %s", width, n, state, strings.Join(parts, ", "))
		if len(s.where) > 0 {
			line += " on the database of " + strings.Join(sortedKeys(s.where), ", ")
		}
		if len(s.servers) > 0 {
			line += ": " + strings.Join(sortedKeys(s.servers), ", ")
		}
		fmt.Fprintln(r.w, line)
		if len(s.skipped) > 0 || (len(s.failed) > 0 && len(s.ran) == 0) {
			if s.adds != "" {
				howTo = append(howTo, fmt.Sprintf("  %s: would add %s", n, s.adds))
				if s.how != "" {
					howTo = append(howTo, "    "+s.how)
				}
			} else if s.how != "" {
				howTo = append(howTo, fmt.Sprintf("  %s: %s", n, s.how))
			}
		}
	}
	if len(howTo) > 0 {
		fmt.Fprintln(r.w, "Not tested, what each would add, and how to test it:")
		for _, h := range howTo {
			fmt.Fprintln(r.w, h)
		}
	}
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
