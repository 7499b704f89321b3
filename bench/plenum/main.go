// Command plenum (bench/plenum) is Plenum's benchmark as a program of its
// own: the same code, flags and output as "plenum bench" (cmd/plenum),
// which measures Plenum's hot path and runtime against a baseline of
// hand-written SQL on the same database, in the same run.
//
// Usage:
//
//	go run ./bench/plenum [--dialect NAME --dsn DSN] [flags]
//
// "-h" shows the flags; bench/BENCH.md describes each measurement and the
// command behind each figure. Exit status: 0 on success, 1 when the run
// failed, 2 for a usage error.
package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/plenumdb/plenum/internal/cmd/bench"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs the benchmark with args and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cmdline.ExitCode(stderr, bench.Run(ctx, args, stdout, stderr))
}
