package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/plenumdb/plenum/internal/cmd/cmdline"

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
			if refused := refusedError(d, err); refused != nil {
				return "", refused
			}
			return "", fmt.Errorf("--dsn: reading the %s server's version: %w", d.Name(), err)
		}
		version = v
	}
	prefix := fmt.Sprintf("pcprobe%08x_", rand.Uint32())
	_, applyErr := migrations.Apply(ctx, db, d, prefix)
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	dropErr := migrations.Drop(dctx, db, d, prefix)
	if refused := refusedError(d, errors.Join(applyErr, dropErr)); refused != nil {
		return "", refused
	}
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

// refusedError says, when err shows that the database had no connection
// to spare or could not be reached (dialect.RefusalOf), that the suite
// could not run and what to do; else it returns nil. Access denied is left
// to preflight's own message, which says which right the suite needs.
func refusedError(d dialect.Dialect, err error) error {
	k := dialect.RefusalOf(d, err)
	if k != dialect.RefusedResources && k != dialect.RefusedUnreachable {
		return nil
	}
	return fmt.Errorf("--dsn: the suite could not run: the %s database refused to serve it (%s): %w\n%s", d.Name(), k, err, refusalAdvice[k])
}

// outcomes collects how each guarantee's subtest ended, from
// conformance.Config.Report, and prints a line for each as it ends.
type outcomes struct {
	mu       sync.Mutex
	by       map[string]conformance.Outcome
	progress io.Writer // where the line of each ended guarantee goes; nil: nowhere
	total    int       // how many guarantees the run selected, for the progress lines
}

func (o *outcomes) add(r conformance.Outcome) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.by == nil {
		o.by = map[string]conformance.Outcome{}
	}
	o.by[r.Name] = r
	if o.progress != nil {
		fmt.Fprintf(o.progress, "[%*d/%d] %-13s %s (%s)\n", len(fmt.Sprint(o.total)), len(o.by), o.total,
			resultOf(r), r.Name, r.Elapsed.Round(10*time.Millisecond))
	}
}

// resultOf is how the table shows an outcome.
func resultOf(r conformance.Outcome) string {
	switch {
	case r.Refused != dialect.NotRefused:
		return "could not run"
	case r.Failed:
		return "BROKEN"
	case r.Skipped:
		return "skipped"
	}
	return "held"
}

// print writes the table of guarantees, in the suite's order, a summary
// line naming the server, and what to do about guarantees that could not
// run.
func (o *outcomes) print(w io.Writer, dialectName, version string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	names := slices.DeleteFunc(conformance.Names(), func(n string) bool { _, ok := o.by[n]; return !ok })
	width := len("guarantee")
	for _, n := range names {
		width = max(width, len(n))
	}
	fmt.Fprintf(w, "\nGuarantees on %s (%s)\n", dialectName, version)
	fmt.Fprintf(w, "  %-*s  %-13s  %8s\n", width, "guarantee", "result", "time")
	count := map[string]int{}
	refusals := map[dialect.Refusal]conformance.Outcome{}
	for _, n := range names {
		r := o.by[n]
		result := resultOf(r)
		count[result]++
		if _, seen := refusals[r.Refused]; r.Refused != dialect.NotRefused && !seen {
			refusals[r.Refused] = r
		}
		fmt.Fprintf(w, "  %-*s  %-13s  %8s\n", width, n, result, r.Elapsed.Round(10*time.Millisecond))
	}
	fmt.Fprintf(w, "%s on %s: %d held, %d broken, %d could not run, %d skipped (not applicable here; -v shows why)\n",
		cmdline.Plural(len(names), "guarantee"), version, count["held"], count["BROKEN"], count["could not run"], count["skipped"])
	for _, k := range []dialect.Refusal{dialect.RefusedResources, dialect.RefusedAccess, dialect.RefusedUnreachable} {
		if r, ok := refusals[k]; ok {
			fmt.Fprintf(w, "COULD NOT RUN: the database refused to serve the suite (%s), e.g. in %s: %v\n  %s\n",
				k, r.Name, r.RefusedBy, refusalAdvice[k])
		}
	}
	if count["BROKEN"] > 0 {
		fmt.Fprintln(w, "BROKEN: the failures of the broken guarantees are printed below.")
	}
}

// refusalAdvice says what to do when the database refused the suite: the
// guarantees it could not run say nothing of the database.
var refusalAdvice = map[dialect.Refusal]string{
	dialect.RefusedResources: "The server had no connection (or resource) to spare: other clients may be using it. " +
		"Run again with a smaller --max-conns, or --serial, or raise the server's max_connections (or the role's connection limit).",
	dialect.RefusedAccess: "The role of --dsn lacks a right the suite needs: grant it, or point --dsn at a scratch database the role owns.",
	dialect.RefusedUnreachable: "The server could not be reached: check the host and port of --dsn, the network, " +
		"and that the server is up and accepting connections.",
}
