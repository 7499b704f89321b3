package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/plenumdb/plenum/migrations"
)

const migrationsAbout = `
Plenum's schema, for the dialect of your choice:

  gen   write the migration files, for your own migration tool or for
        review; fits a //go:generate line:
          //go:generate go run github.com/plenumdb/plenum/cmd/plenum migrations gen --dialect sqlite --format goose --out db/migrations
  up    apply pending versions to a database with Plenum's own migrator,
        under a lock, so that concurrent runs cannot collide

Run "plenum migrations <gen|up> -h" for their flags.`

func runMigrationsCmd(ctx context.Context, e env, args []string) error {
	if len(args) == 0 {
		fmt.Fprintf(e.stderr, "Usage: plenum migrations <gen|up> [flags]\n%s\n", migrationsAbout)
		return errUsageShown
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintf(e.stderr, "Usage: plenum migrations <gen|up> [flags]\n%s\n", migrationsAbout)
		return nil
	case "gen":
		return runMigrationsGen(e, args[1:])
	case "up":
		return runMigrationsUp(ctx, e, args[1:])
	}
	return usagef("migrations: unknown subcommand %q (want gen or up)", args[0])
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
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	d, err := lookupDialect(dialectName)
	if err != nil {
		return err
	}
	if !slices.Contains(migrations.Formats(), format) {
		return usagef("--format %q: want one of %s", format, strings.Join(migrations.Formats(), ", "))
	}
	if out == "" {
		return usagef("missing --out (the directory to write the files into)")
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
	return nil
}

func runMigrationsUp(ctx context.Context, e env, args []string) error {
	var dialectName, dsn, prefix string
	fs := newFlags(e, "migrations up", "migrations up --dialect NAME --dsn DSN [flags]", `
Applies every pending schema version to the database, under the dialect's
migration lock, and prints the versions it applied. Running it again does
nothing. For sqlite the DSN is a database file path (created if missing).`)
	fs.StringVar(&dialectName, "dialect", "", "database dialect (required)")
	fs.StringVar(&dsn, "dsn", "", "database to migrate (required; for sqlite a file path)")
	fs.StringVar(&prefix, "prefix", migrations.DefaultPrefix, "table name prefix")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := checkPrefix(prefix); err != nil {
		return err
	}
	db, d, err := openDialect(dialectName, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	applied, err := migrations.Apply(ctx, db, d, prefix)
	if err != nil {
		return err
	}
	v, err := migrations.Version(ctx, db, d, prefix)
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		fmt.Fprintf(e.stdout, "schema %s* already at version %d: nothing to apply\n", prefix, v)
		return nil
	}
	vs := make([]string, len(applied))
	for i, a := range applied {
		vs[i] = fmt.Sprint(a)
	}
	word := "version"
	if len(applied) > 1 {
		word = "versions"
	}
	fmt.Fprintf(e.stdout, "applied %s %s; schema %s* now at version %d\n", word, strings.Join(vs, ", "), prefix, v)
	return nil
}
