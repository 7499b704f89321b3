package cmdline

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// NewFlags returns a flag set for the command name, writing its usage and
// its errors to stderr, whose usage shows synopsis and about before the
// flags.
func NewFlags(stderr io.Writer, name, synopsis, about string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: plenum %s\n\n%s\n", synopsis, strings.TrimSpace(about))
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprint(w, "\nFlags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// ParseFlags parses args, and refuses positional arguments: every command
// takes flags only.
func ParseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return ErrUsageShown
	}
	if fs.NArg() > 0 {
		return Usagef("%s: unexpected argument %q (flags only; see \"plenum %s -h\")", fs.Name(), fs.Arg(0), fs.Name())
	}
	return nil
}
