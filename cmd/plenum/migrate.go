package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/plenumdb/plenum/internal/cmd/cmdline"
	"github.com/plenumdb/plenum/migrations"
)

const migrationsAbout = `
Plenum's schema as files, for the dialect of your choice:

  gen   write the migration files, for your own migration tool or for
        review; fits a //go:generate line:
          //go:generate go run github.com/plenumdb/plenum/cmd/plenum migrations gen --dialect sqlite --format goose --out db/migrations
  up    the same as "plenum migrate up"

To apply, roll back or inspect the schema of a database with Plenum's own
migrator, see "plenum migrate".

Run "plenum migrations <gen|up> -h" for their flags.`

func runMigrationsCmd(ctx context.Context, e env, args []string) error {
	if len(args) == 0 {
		fmt.Fprintf(e.stderr, "Usage: plenum migrations <gen|up> [flags]\n%s\n", migrationsAbout)
		return cmdline.ErrUsageShown
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(e.stderr, "Usage: plenum migrations <gen|up> [flags]\n%s\n", migrationsAbout)
		return nil
	case "gen":
		return runMigrationsGen(e, args[1:])
	case "up":
		return runMigrateUp(ctx, e, "migrations up", args[1:])
	}
	return cmdline.Usagef("migrations: unknown subcommand %q (want gen or up)", args[0])
}

const migrateAbout = `
Plenum's own migrator, on a database:

  up      apply the pending schema versions (all, or up to --to), under a
          lock, so that concurrent runs cannot collide; completes a version
          that an earlier run left partly applied
  down    roll back the newest version (or every version above --to)
  status  list every version: applied (and when), pending, or left partly
          applied or rolled back by a run that failed half way

The same from Go: migrations.Up, migrations.Down and migrations.Status
(core.Options{Migrate: true} applies at open). Run "plenum migrate
<up|down|status> -h" for their flags.`

func runMigrateCmd(ctx context.Context, e env, args []string) error {
	usage := func() { fmt.Fprintf(e.stderr, "Usage: plenum migrate <up|down|status> [flags]\n%s\n", migrateAbout) }
	if len(args) == 0 {
		usage()
		return cmdline.ErrUsageShown
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage()
		return nil
	case "up":
		return runMigrateUp(ctx, e, "migrate up", args[1:])
	case "down":
		return runMigrateDown(ctx, e, args[1:])
	case "status":
		return runMigrateStatus(ctx, e, args[1:])
	}
	return cmdline.Usagef("migrate: unknown subcommand %q (want up, down or status)", args[0])
}

func runMigrationsGen(e env, args []string) error {
	var dialectName, format, out, prefix string
	fs := newFlags(e, "migrations gen", "migrations gen --dialect NAME --out DIR [flags]", `
Writes Plenum's schema migrations for one dialect into DIR (created if
missing): NNNN_name.up.sql and NNNN_name.down.sql for the plain and
golang-migrate formats, NNNN_name.sql with Up and Down sections for goose.
Each file records its version in Plenum's migrations table, so a store
opened later sees the schema as current.`)
	fs.StringVar(&dialectName, "dialect", "", "database dialect (required)")
	fs.StringVar(&format, "format", migrations.FormatPlain, "file format: "+strings.Join(migrations.Formats(), ", "))
	fs.StringVar(&out, "out", "", "directory to write the files into (required)")
	fs.StringVar(&prefix, "prefix", migrations.DefaultPrefix, "table name prefix")
	if err := cmdline.ParseFlags(fs, args); err != nil {
		return err
	}
	d, err := lookupDialect(dialectName)
	if err != nil {
		return err
	}
	if !slices.Contains(migrations.Formats(), format) {
		return cmdline.Usagef("--format %q: want one of %s", format, strings.Join(migrations.Formats(), ", "))
	}
	if out == "" {
		return cmdline.Usagef("missing --out (the directory to write the files into)")
	}
	if err := checkPrefix(prefix); err != nil {
		return err
	}
	paths, err := migrations.WriteFiles(out, d, prefix, format)
	if err != nil {
		return err
	}
	for _, p := range paths {
		fmt.Fprintln(e.stdout, p)
	}
	for _, n := range migrations.Notes(d, format) {
		fmt.Fprintln(e.stderr, "note:", n)
	}
	return nil
}

// schemaFlags registers the database flags every migrate command takes on
// fs: the database, and its tables' prefix.
func schemaFlags(fs *flag.FlagSet, f *cmdline.Database) {
	f.Register(fs, "", "to migrate")
	f.RegisterPrefix(fs)
}

func runMigrateUp(ctx context.Context, e env, name string, args []string) error {
	var f cmdline.Database
	var to int
	fs := newFlags(e, name, name+" (--dialect NAME --dsn DSN | --db FILE) [flags]", `
Applies the pending schema versions to the database (every one, or up to
--to), under the dialect's migration lock, and prints the versions it
applied. Running it again does nothing. A version that an earlier run left
partly applied (where DDL is not transactional: MySQL, MariaDB,
CockroachDB) is completed. For sqlite the DSN is a database file path
(created if missing).`)
	schemaFlags(fs, &f)
	fs.IntVar(&to, "to", migrations.LatestVersion, fmt.Sprintf("the version to bring the schema up to (1 to %d)", migrations.LatestVersion))
	if err := cmdline.ParseFlags(fs, args); err != nil {
		return err
	}
	if to < 1 || to > migrations.LatestVersion {
		return cmdline.Usagef("--to %d: want a version from 1 to %d", to, migrations.LatestVersion)
	}
	if err := f.CheckPrefix(); err != nil {
		return err
	}
	db, d, err := f.Open()
	if err != nil {
		return err
	}
	defer db.Close()
	applied, err := migrations.Up(ctx, db, d, f.Prefix, to)
	if err != nil {
		return err
	}
	v, err := migrations.Version(ctx, db, d, f.Prefix)
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		fmt.Fprintf(e.stdout, "schema %s* already at version %d: nothing to apply\n", f.Prefix, v)
		return nil
	}
	fmt.Fprintf(e.stdout, "applied %s; schema %s* now at version %d\n", versionList(applied), f.Prefix, v)
	return nil
}

func runMigrateDown(ctx context.Context, e env, args []string) error {
	var f cmdline.Database
	to := -1
	fs := newFlags(e, "migrate down", "migrate down (--dialect NAME --dsn DSN | --db FILE) [--to N]", `
Rolls back the newest applied schema version, or with --to every version
above N, newest first, under the dialect's migration lock. Rolling back a
version drops what it added, with its data: version 1's down drops every
Plenum table, so it runs only when asked for by name (--to 0). A rollback
that an earlier run left half done is completed.`)
	schemaFlags(fs, &f)
	fs.IntVar(&to, "to", -1, "roll back every version above this one (0 drops everything); default: the newest version only")
	if err := cmdline.ParseFlags(fs, args); err != nil {
		return err
	}
	if to != -1 && (to < 0 || to > migrations.LatestVersion) {
		return cmdline.Usagef("--to %d: want a version from 0 to %d", to, migrations.LatestVersion)
	}
	if err := f.CheckPrefix(); err != nil {
		return err
	}
	db, d, err := f.Open()
	if err != nil {
		return err
	}
	defer db.Close()
	if to == -1 {
		st, err := migrations.Status(ctx, db, d, f.Prefix)
		if err != nil {
			return err
		}
		newest := 0
		for _, s := range st {
			if s.State != migrations.Pending && !s.Unknown {
				newest = max(newest, s.Version)
			}
		}
		switch newest {
		case 0:
			fmt.Fprintf(e.stdout, "schema %s* has no version applied: nothing to roll back\n", f.Prefix)
			return nil
		case 1:
			return cmdline.Usagef("the newest version is 1, whose rollback drops every Plenum table under %s* with its data: say --to 0 to do that", f.Prefix)
		}
		to = newest - 1
	}
	rolled, err := migrations.Down(ctx, db, d, f.Prefix, to)
	if err != nil {
		return err
	}
	if len(rolled) == 0 {
		fmt.Fprintf(e.stdout, "schema %s* has no version above %d: nothing to roll back\n", f.Prefix, to)
		return nil
	}
	fmt.Fprintf(e.stdout, "rolled back %s; schema %s* now at version %d\n", versionList(rolled), f.Prefix, to)
	return nil
}

func runMigrateStatus(ctx context.Context, e env, args []string) error {
	var f cmdline.Database
	fs := newFlags(e, "migrate status", "migrate status (--dialect NAME --dsn DSN | --db FILE) [flags]", `
Lists every schema version this build knows, and any newer one the database
records: applied (with the time, on the database clock), pending, or left
partly applied or partly rolled back by a run that failed half way, with
what completes it. It only reads.`)
	schemaFlags(fs, &f)
	if err := cmdline.ParseFlags(fs, args); err != nil {
		return err
	}
	if err := f.CheckPrefix(); err != nil {
		return err
	}
	db, d, err := f.Open()
	if err != nil {
		return err
	}
	defer db.Close()
	st, err := migrations.Status(ctx, db, d, f.Prefix)
	if err != nil {
		return err
	}
	v, err := migrations.Version(ctx, db, d, f.Prefix)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "schema %s* (%s) at version %d; this build needs %d\n\n", f.Prefix, d.Name(), v, migrations.LatestVersion)
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tNAME\tSTATE\tAT")
	var todo []string
	for _, s := range st {
		at := "-"
		if !s.AppliedAt.IsZero() {
			at = s.AppliedAt.UTC().Format(time.DateTime + ".000 UTC")
		}
		state := s.State.String()
		switch {
		case s.Unknown:
			state += " (by a newer Plenum)"
		case s.State == migrations.PartlyApplied:
			todo = append(todo, fmt.Sprintf("version %d was left partly applied by a run that failed: run plenum migrate up to complete it", s.Version))
		case s.State == migrations.PartlyRolledBack:
			todo = append(todo, fmt.Sprintf("version %d was left partly rolled back by a run that failed: run plenum migrate down to complete the rollback, or up to restore it", s.Version))
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", s.Version, cmdline.Printable(s.Name), state, at)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(todo) > 0 {
		fmt.Fprintln(e.stdout)
		for _, t := range todo {
			fmt.Fprintln(e.stdout, t)
		}
	}
	return nil
}

// versionList renders "version 2" or "versions 1, 2".
func versionList(vs []int) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = fmt.Sprint(v)
	}
	if len(vs) == 1 {
		return "version " + parts[0]
	}
	return "versions " + strings.Join(parts, ", ")
}
