package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// preflight makes sure the suite can run on db, opened (and checked) by
// openDialect, before any subtest starts: the suite may create and drop
// tables there (it tries, under a random prefix of its own, and drops what
// it made). It returns the server's version for the report. A clear
// refusal now beats every subtest failing alike.
func preflight(ctx context.Context, db *sql.DB, r dialect.Registration) (string, error) {
	d := r.Dialect
	version := "server version unknown"
	if r.Version != nil {
		v, err := r.Version(ctx, db)
		if err != nil {
			return "", fmt.Errorf("--dsn: reading the %s server's version: %w", d.Name(), err)
		}
		version = v
	}
	prefix := fmt.Sprintf("pcprobe%08x_", rand.Uint32())
	_, applyErr := migrations.Apply(ctx, db, d, prefix)
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	dropErr := migrations.Drop(dctx, db, d, prefix)
	switch {
	case applyErr != nil:
		return "", fmt.Errorf("--dsn: the suite cannot create tables in this %s database (%s): %w\n"+
			"It needs a database (or schema) where it may create and drop tables of its own, under random prefixes such as %s; "+
			"it never touches existing tables. Grant the right to create tables, or point --dsn at a scratch database",
			d.Name(), version, applyErr, prefix)
	case dropErr != nil:
		return "", fmt.Errorf("--dsn: the suite cannot drop the tables it creates in this %s database (it made and could not drop %s*): %w", d.Name(), prefix, dropErr)
	}
	return version, nil
}

// outcomes collects how each guarantee's subtest ended, from
// conformance.Config.Report.
type outcomes struct {
	mu sync.Mutex
	by map[string]conformance.Outcome
}

func (o *outcomes) add(r conformance.Outcome) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.by == nil {
		o.by = map[string]conformance.Outcome{}
	}
	o.by[r.Name] = r
}

// print writes the table of guarantees, in the suite's order, and a
// summary line naming the server.
func (o *outcomes) print(w io.Writer, dialectName, version string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	names := slices.DeleteFunc(conformance.Names(), func(n string) bool { _, ok := o.by[n]; return !ok })
	width := len("guarantee")
	for _, n := range names {
		width = max(width, len(n))
	}
	fmt.Fprintf(w, "\nGuarantees on %s (%s)\n", dialectName, version)
	fmt.Fprintf(w, "  %-*s  %-7s  %8s\n", width, "guarantee", "result", "time")
	held, broken, skipped := 0, 0, 0
	for _, n := range names {
		r := o.by[n]
		result := "held"
		switch {
		case r.Failed:
			result, broken = "BROKEN", broken+1
		case r.Skipped:
			result, skipped = "skipped", skipped+1
		default:
			held++
		}
		fmt.Fprintf(w, "  %-*s  %-7s  %8s\n", width, n, result, r.Elapsed.Round(10*time.Millisecond))
	}
	fmt.Fprintf(w, "%s on %s: %d held, %d broken, %d skipped (not applicable here; -v shows why)\n",
		plural(len(names), "guarantee"), version, held, broken, skipped)
	if broken > 0 {
		fmt.Fprintln(w, "BROKEN: the failures of the broken guarantees are printed below.")
	}
}
