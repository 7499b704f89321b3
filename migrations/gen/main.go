// Command gen writes the SQL migration files checked in under migrations/,
// one directory per dialect. Run it through go generate:
//
//	go generate ./migrations
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/plenumdb/plenum/migrations/internal/generate"
)

func main() {
	out := flag.String("out", ".", "directory to write <dialect>/ directories into")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "gen: unexpected arguments %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}
	if _, err := generate.Run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
