package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/sqlite"
)

func TestMigrationsGen_EveryFormat(t *testing.T) {
	t.Parallel()
	for format, want := range map[string][]string{
		"plain":          {"0001_init.up.sql", "0001_init.down.sql"},
		"golang-migrate": {"0001_init.up.sql", "0001_init.down.sql"},
		"goose":          {"0001_init.sql"},
	} {
		dir := filepath.Join(t.TempDir(), "db", "migrations")
		code, out, errOut := cli(t, "migrations", "gen", "--dialect", "sqlite", "--format", format, "--out", dir, "--prefix", "app_")
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", format, code, errOut)
		}
		for _, name := range want {
			p := filepath.Join(dir, name)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatalf("%s: %v", format, err)
			}
			if !strings.HasPrefix(string(b), migrations.GeneratedHeader) || !strings.Contains(string(b), "app_items") {
				t.Errorf("%s: %s does not look generated for prefix app_:\n%s", format, name, b)
			}
			if !strings.Contains(out, p) {
				t.Errorf("%s: output does not list %s:\n%s", format, p, out)
			}
		}
	}
}

func TestMigrationsGen_Errors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--dialect", "nosuchdb", "--out", dir}, `unknown dialect "nosuchdb" (known: `},
		{[]string{"--out", dir}, "missing --dialect (known: "},
		{[]string{"--dialect", "sqlite"}, "missing --out"},
		{[]string{"--dialect", "sqlite", "--out", dir, "--format", "flyway"}, `--format "flyway": want one of plain, golang-migrate, goose`},
		{[]string{"--dialect", "sqlite", "--out", dir, "--prefix", "Nope"}, "--prefix"},
	} {
		code, _, errOut := cli(t, append([]string{"migrations", "gen"}, c.args...)...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", c.args, code, errOut, exitUsage, c.want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("a refused gen wrote %d files", len(entries))
	}
}

// up applies the schema, a second up applies nothing, and a store opens on
// the result.
func TestMigrationsUp_AppliesOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "app.db")
	code, out, errOut := cli(t, "migrations", "up", "--dialect", "sqlite", "--dsn", path, "--prefix", "app_")
	if code != exitOK || !strings.Contains(out, "applied version 1") {
		t.Fatalf("first up: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = cli(t, "migrations", "up", "--dialect", "sqlite", "--dsn", path, "--prefix", "app_")
	if code != exitOK || !strings.Contains(out, "nothing to apply") {
		t.Fatalf("second up: exit %d\n%s%s", code, out, errOut)
	}
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := core.Open(context.Background(), db, sqlite.Dialect(), core.Options{Prefix: "app_"}); err != nil {
		t.Fatalf("core.Open after up: %v", err)
	}
}

func TestMigrationsUp_Errors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--dialect", "sqlite"}, exitUsage, "missing --dsn"},
		{[]string{"--dsn", "x.db"}, exitUsage, "missing --dialect"},
		{[]string{"--dialect", "oracle", "--dsn", "u:p@/db"}, exitFailure, "oracle: invalid DSN: want oracle://"},
		{[]string{"--dialect", "sqlite", "--dsn", ":memory:"}, exitFailure, "in-memory"},
		{[]string{"--dialect", "sqlite", "--dsn", filepath.Join(t.TempDir(), "no", "such", "dir", "x.db")}, exitFailure, "sqlite: open"},
	} {
		code, _, errOut := cli(t, append([]string{"migrations", "up"}, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", c.args, code, errOut, c.code, c.want)
		}
	}
}
