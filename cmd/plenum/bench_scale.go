package main

import (
	"context"
	"flag"
	"io"
)

// scaleOptions are the measurements at scale, each behind its own flag so
// that a plain run stays a matter of minutes.
type scaleOptions struct {
}

func (s *scaleOptions) flags(fs *flag.FlagSet) {}

func (s scaleOptions) validate() error { return nil }

// scaleReport is what the measurements at scale found.
type scaleReport struct{}

func runScale(ctx context.Context, w io.Writer, rep *benchReport, sd sides, o benchOptions, settle func() error) error {
	return nil
}
