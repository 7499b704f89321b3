package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
)

const conformanceAbout = `
Runs Plenum's conformance suite, every guarantee of the design as a subtest,
against one database: the proof that claiming, fencing, recovery and fan-in
hold on your server, version and settings. Each subtest works under its own
random table prefix and drops its tables afterwards; no other table is
touched. The database must let the suite create tables: it refuses, before
running anything, one where it cannot. For sqlite the DSN is a database
file path.

As each guarantee ends, a line on stderr says how. At the end it prints
a table of the guarantees held, broken, that could not run (the database
turned the suite away: too many connections, access denied, unreachable;
the report says what to do) and skipped (not applicable to the
database), with the server's version. A guarantee is broken only when
the database did something it forbids. The suite opens at most
--max-conns connections at once. Before the table, the output is that of
"go test": quiet on success unless -v, each failure with its message. The
exit status is 0 when every guarantee run held, 1 when any was broken or
could not run.`

// conformanceOptions configure a conformance run.
type conformanceOptions struct {
	// Database names the database the suite runs on, under tables of its
	// own (it takes no --prefix).
	cmdline.Database
	Run      string // regexp selecting subtests
	Verbose  bool
	List     bool
	Scale    float64
	Serial   bool
	MaxConns int
	FailFast bool
	Timeout  time.Duration
}

// runSuite runs tests the way "go test" would and exits the process with
// their status.
//
// conformance.Run needs a real *testing.T, which only the testing package's
// own runner can make. testing.RunTests does not run anything unless
// testing.M.Run has parsed -test.cpu first, and testing.MainStart takes an
// interface of the testing package's internal hooks that changes between Go
// releases (a build with a newer Go would stop compiling). testing.Main is
// the entry point kept stable for programs that run tests outside "go
// test"; it parses the test flags from the command line unless they were
// parsed already, and calls os.Exit, so the test flags are parsed here from
// the command's options and the suite is the last thing the process does.
func runSuite(testArgs []string, tests []testing.InternalTest) {
	testing.Init()
	if err := flag.CommandLine.Parse(testArgs); err != nil {
		fmt.Fprintf(os.Stderr, "plenum: conformance: %v\n", err)
		os.Exit(cmdline.ExitUsage)
	}
	// Let ^C end the process as it would end "go test", instead of being
	// caught for a context no test watches.
	signal.Reset(os.Interrupt, syscall.SIGTERM)
	testing.Main(matchRegexp, tests, nil, nil)
}

// matchRegexp is the matcher "go test" uses for -run.
func matchRegexp(pat, str string) (bool, error) {
	return regexp.MatchString(pat, str)
}

func runConformanceCmd(ctx context.Context, e env, args []string) error {
	o := conformanceOptions{Scale: 1, Timeout: 30 * time.Minute, MaxConns: defaultMaxConns}
	fs := newFlags(e, "conformance", "conformance ([--dialect NAME] --dsn DSN | --db FILE) [flags]", conformanceAbout)
	o.Register(fs, "", "to test")
	fs.StringVar(&o.Run, "run", "", "run only the guarantees matching `regexp` (see -list)")
	fs.BoolVar(&o.Verbose, "v", false, "print every subtest as it runs")
	fs.BoolVar(&o.List, "list", false, "list the guarantees and exit")
	fs.Float64Var(&o.Scale, "scale", o.Scale, "in (0, 1]: shrink the suite's big counts for a slow database")
	fs.BoolVar(&o.Serial, "serial", false, "run the guarantees one after another (for a small connection limit)")
	fs.IntVar(&o.MaxConns, "max-conns", o.MaxConns, "open at most `n` connections at once, all guarantees together (more runs more of them in parallel)")
	fs.BoolVar(&o.FailFast, "failfast", false, "stop after the first failure")
	fs.DurationVar(&o.Timeout, "timeout", o.Timeout, "abort the run (with a stack dump) after `d`; 0: never")
	if err := cmdline.ParseFlags(fs, args); err != nil {
		return err
	}
	if o.List {
		for _, n := range conformance.Names() {
			fmt.Fprintln(e.stdout, n)
		}
		return nil
	}
	plan, err := conformancePlan(ctx, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "Plenum conformance suite on %s (%s)\n", plan.Config.Dialect.Name(), cmdline.Printable(plan.Version))
	tally := &outcomes{progress: e.stderr, total: plan.Selected}
	cfg := plan.Config
	cfg.Report = tally.add
	runSuite(plan.Args, []testing.InternalTest{{
		Name: "Conformance",
		F: func(t *testing.T) {
			// The parent's cleanup runs once every guarantee's subtest has
			// ended, parallel ones included.
			t.Cleanup(func() { tally.print(e.stdout, cfg.Dialect.Name(), cmdline.Printable(plan.Version)) })
			conformance.Run(t, cfg)
		},
	}})
	return nil
}

// conformanceRun is what conformancePlan prepares: the suite's config, the
// test flags, and the server's version for the report.
type conformanceRun struct {
	Config  conformance.Config
	Args    []string
	Version string
	// Selected is how many guarantees --run selects.
	Selected int
}

// conformancePlan checks the options, makes sure the database opens and
// has the settings the dialect needs (a clear error now beats every
// subtest failing alike), and returns the suite's config and test flags.
func conformancePlan(ctx context.Context, o conformanceOptions) (conformanceRun, error) {
	if math.IsNaN(o.Scale) || o.Scale <= 0 || o.Scale > 1 {
		return conformanceRun{}, cmdline.Usagef("--scale %v: want a number in (0, 1]", o.Scale)
	}
	if o.Timeout < 0 {
		return conformanceRun{}, cmdline.Usagef("--timeout %v is negative", o.Timeout)
	}
	if o.MaxConns < minMaxConns {
		return conformanceRun{}, cmdline.Usagef("--max-conns %d: the suite needs at least %d connections", o.MaxConns, minMaxConns)
	}
	run := "^Conformance$"
	selected := len(conformance.Names())
	if o.Run != "" {
		// "go test" reads -run as alternatives of slash-separated levels:
		// each alternative gets the top-level test's name in front.
		var alts []string
		var tops []*regexp.Regexp
		for _, alt := range splitTopLevel(o.Run, '|') {
			levels := splitTopLevel(alt, '/')
			for _, l := range levels {
				if _, err := regexp.Compile(l); err != nil {
					return conformanceRun{}, cmdline.Usagef("--run %q: %v", o.Run, err)
				}
			}
			tops = append(tops, regexp.MustCompile(levels[0]))
			alts = append(alts, "^Conformance$/"+alt)
		}
		selected = 0
		for _, n := range conformance.Names() {
			if slices.ContainsFunc(tops, func(re *regexp.Regexp) bool { return re.MatchString(n) }) {
				selected++
			}
		}
		// A pattern that selects nothing would pass without testing
		// anything: refuse it.
		if selected == 0 {
			return conformanceRun{}, cmdline.Usagef("--run %q matches no guarantee (see --list)", o.Run)
		}
		run = strings.Join(alts, "|")
	}
	r, dsn, err := o.Resolve("")
	if err != nil {
		return conformanceRun{}, err
	}
	db, d, err := cmdline.OpenDialect(r.Dialect.Name(), dsn)
	if err != nil {
		return conformanceRun{}, err
	}
	version, err := preflight(ctx, db, r)
	db.Close()
	if err != nil {
		return conformanceRun{}, err
	}
	open := r.Open
	perGuarantee, parallel := connBudget(o.MaxConns, o.Serial)
	cfg := conformance.Config{
		Dialect: d,
		// Every call opens a new handle, as Config.Open requires.
		Open: func(tb testing.TB) *sql.DB {
			db, err := open(dsn)
			if err != nil {
				tb.Fatalf("open the %s database: %v", d.Name(), err)
			}
			db.SetMaxOpenConns(perGuarantee)
			tb.Cleanup(func() { db.Close() })
			return db
		},
		Scale:  o.Scale,
		Serial: o.Serial,
	}
	testArgs := []string{
		"-test.run=" + run,
		"-test.timeout=" + o.Timeout.String(),
		fmt.Sprintf("-test.parallel=%d", parallel),
		fmt.Sprintf("-test.v=%t", o.Verbose),
		fmt.Sprintf("-test.failfast=%t", o.FailFast),
	}
	return conformanceRun{Config: cfg, Args: testArgs, Version: version, Selected: selected}, nil
}

// defaultMaxConns is --max-conns's default: well within PostgreSQL's
// default max_connections of 100 and MySQL's of 151, with room left for
// the server's other clients.
const defaultMaxConns = 40

// connsPerGuarantee is the most connections one guarantee's handle opens
// at once: its concurrent checks wait in the pool beyond it.
const connsPerGuarantee = 10

// minMaxConns is the smallest --max-conns the suite runs with: the checks
// that hold a claim's row lock in one transaction while another
// connection works beside it need a few at once.
const minMaxConns = 4

// connBudget splits maxConns between the guarantees: how many
// connections each one's handle may open, and how many guarantees run at
// once (the test flag -parallel), so that together they never open more
// than maxConns.
func connBudget(maxConns int, serial bool) (perGuarantee, parallel int) {
	perGuarantee = min(connsPerGuarantee, maxConns)
	if serial {
		return perGuarantee, 1
	}
	return perGuarantee, max(1, maxConns/perGuarantee)
}

// splitTopLevel splits a regexp at every sep outside brackets, parentheses
// and escapes, the way "go test" splits -run.
func splitTopLevel(pattern string, sep byte) []string {
	var out []string
	depth, class, start := 0, false, 0
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; {
		case c == '\\':
			i++
		case class:
			class = c != ']'
		case c == '[':
			class = true
		case c == '(':
			depth++
		case c == ')':
			depth = max(0, depth-1)
		case c == sep && depth == 0:
			out = append(out, pattern[start:i])
			start = i + 1
		}
	}
	return append(out, pattern[start:])
}
