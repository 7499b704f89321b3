// Command plenum is Plenum's command line: a demo of a fan-out/fan-in
// workflow on an embedded SQLite file, schema migrations for each dialect, a
// benchmark against bare SQL, the conformance suite outside "go test", a
// look inside a database's Plenum tables, the flow control limits of a
// queue's keys, the schedules kept in the database, a web dashboard of them, and a
// chaos round that injures worker processes and checks the invariants after.
// The benchmark's code is internal/cmd/bench, which the program
// bench/plenum runs too, with the same flags and output (bench/BENCH.md);
// what the commands share is internal/cmd/cmdline.
//
// Usage:
//
//	plenum <command> [flags]
//
// "plenum help" lists the commands; "plenum <command> -h" shows the flags of
// one. Exit status: 0 on success, 1 when the command failed (an invariant
// did not hold, the database refused), 2 for a usage error.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/plenumdb/plenum/internal/cmd/cmdline"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// env is where a command writes: results to stdout, usage and errors to
// stderr. Tests pass buffers.
type env struct {
	stdout, stderr io.Writer
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, e env, args []string) error
}

// commands is a function, not a variable, because help refers back to it.
func commands() []command {
	return []command{
		{"demo", "run a fan-out/fan-in workflow with crashes and retries on a temporary SQLite file", runDemoCmd},
		{"bench", "measure claim+complete and fan-in throughput against a bare-SQL baseline", runBenchCmd},
		{"migrate", "apply (up), roll back (down) or list (status) a database's schema versions", runMigrateCmd},
		{"migrations", "generate migration files for your own migration tool (gen)", runMigrationsCmd},
		{"conformance", "run the conformance suite against a database", runConformanceCmd},
		{"inspect", "show items by state, barriers and owners of a database", runInspectCmd},
		{"limits", "list, set or delete the flow control limits of a queue's keys", runLimitsCmd},
		{"schedules", "list, set, pause, resume, trigger, backfill or delete the schedules kept in the database", runSchedulesCmd},
		{"dashboard", "serve the web dashboard of a database (read-only unless --actions)", runDashboardCmd},
		{"chaos", "run workers under kills, dropped connections, stalls and clock skew, then check the invariants", runChaosCmd},
		{"help", "show help for plenum or one command", runHelpCmd},
	}
}

// run runs one command line and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	e := env{stdout: stdout, stderr: stderr}
	if len(args) == 0 {
		printUsage(stderr)
		return cmdline.ExitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		printUsage(stdout)
		return cmdline.ExitOK
	}
	for _, c := range commands() {
		if c.name == name {
			return cmdline.ExitCode(stderr, c.run(ctx, e, args[1:]))
		}
	}
	fmt.Fprintf(stderr, "plenum: unknown command %q\n\n", name)
	printUsage(stderr)
	return cmdline.ExitUsage
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `Plenum: claiming, fencing and fan-in for job engines on SQL databases.

Usage:

	plenum <command> [flags]

Commands:

`)
	for _, c := range commands() {
		fmt.Fprintf(w, "\t%-12s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Start with "plenum demo". Run "plenum <command> -h" for a command's flags.
`)
}

func runHelpCmd(ctx context.Context, e env, args []string) error {
	if len(args) == 0 {
		printUsage(e.stdout)
		return nil
	}
	if len(args) > 1 {
		return cmdline.Usagef("help takes one command name, got %q", strings.Join(args, " "))
	}
	for _, c := range commands() {
		if c.name == args[0] && c.name != "help" {
			// A command's usage goes to stderr on -h; asked for by name,
			// it goes to stdout.
			return c.run(ctx, env{stdout: e.stdout, stderr: e.stdout}, []string{"-h"})
		}
	}
	if args[0] == "help" {
		printUsage(e.stdout)
		return nil
	}
	return cmdline.Usagef("unknown command %q (run \"plenum help\" for the list)", args[0])
}

// newFlags returns a flag set for a command whose usage shows synopsis and
// about before the flags.
func newFlags(e env, name, synopsis, about string) *flag.FlagSet {
	return cmdline.NewFlags(e.stderr, name, synopsis, about)
}
