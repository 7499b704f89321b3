package main

import (
	"context"

	"github.com/plenumdb/plenum/internal/cmd/bench"
)

// runBenchCmd is "plenum bench": the benchmark, whose code is
// internal/cmd/bench, shared with the program bench/plenum.
func runBenchCmd(ctx context.Context, e env, args []string) error {
	return bench.Run(ctx, args, e.stdout, e.stderr)
}
