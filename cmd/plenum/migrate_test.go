package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/internal/cmd/cmdline"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/sqlite"
)

func TestMigrationsGen_EveryFormat(t *testing.T) {
	t.Parallel()
	for format, want := range map[string][]string{
		"plain":          {"0001_init.up.sql", "0001_init.down.sql", "0002_runtime.up.sql", "0002_runtime.down.sql"},
		"golang-migrate": {"0001_init.up.sql", "0001_init.down.sql", "0002_runtime.up.sql", "0002_runtime.down.sql"},
		"goose":          {"0001_init.sql", "0002_runtime.sql"},
	} {
		dir := filepath.Join(t.TempDir(), "db", "migrations")
		code, out, errOut := cli(t, "migrations", "gen", "--dialect", "sqlite", "--format", format, "--out", dir, "--prefix", "app_")
		if code != cmdline.ExitOK {
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
		if code != cmdline.ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", c.args, code, errOut, cmdline.ExitUsage, c.want)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("a refused gen wrote %d files", len(entries))
	}
}

// up applies the schema, a second up applies nothing, and a store opens on
// the result; "migrations up" is the same command.
func TestMigrationsUp_AppliesOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "app.db")
	code, out, errOut := cli(t, "migrations", "up", "--dialect", "sqlite", "--dsn", path, "--prefix", "app_")
	if code != cmdline.ExitOK || !strings.Contains(out, "applied versions 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14; schema app_* now at version 14") {
		t.Fatalf("first up: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = cli(t, "migrate", "up", "--dialect", "sqlite", "--dsn", path, "--prefix", "app_")
	if code != cmdline.ExitOK || !strings.Contains(out, "already at version 14: nothing to apply") {
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

// migrate names its database with the flags every command shares: --db
// for an SQLite file, and the DSN from a file or the environment, with
// the dialect its form says.
func TestMigrate_TakesEveryCommandsDatabaseFlags(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "app.db")
	code, out, errOut := cli(t, "migrate", "up", "--db", path)
	if code != cmdline.ExitOK || !strings.Contains(out, "now at version") {
		t.Fatalf("up --db: exit %d\n%s%s", code, out, errOut)
	}
	dsnFile := filepath.Join(dir, "dsn")
	if err := os.WriteFile(dsnFile, []byte(path+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = cli(t, "migrate", "status", "--dsn-file", dsnFile)
	if code != cmdline.ExitOK || !strings.Contains(out, "(sqlite) at version") {
		t.Fatalf("status --dsn-file: exit %d\n%s%s", code, out, errOut)
	}
	t.Setenv("PLENUM_TEST_MIGRATE_DSN", path)
	code, out, errOut = cli(t, "migrate", "up", "--dsn-env", "PLENUM_TEST_MIGRATE_DSN")
	if code != cmdline.ExitOK || !strings.Contains(out, "nothing to apply") {
		t.Fatalf("up --dsn-env: exit %d\n%s%s", code, out, errOut)
	}
}

// A command line the CLI refuses as a usage error touches nothing: the
// database file it names is not created, let alone migrated. (A refused
// "--to" that became a valid version once a schema version landed once
// migrated a file into this package's directory.)
func TestMigrationsUp_Errors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "x.db")
	for _, cmd := range [][]string{{"migrations", "up"}, {"migrate", "up"}, {"migrate", "down"}, {"migrate", "status"}} {
		for _, c := range []struct {
			args []string
			code int
			want string
		}{
			{[]string{"--dialect", "sqlite"}, cmdline.ExitUsage, "missing --dsn"},
			{nil, cmdline.ExitUsage, "missing --dialect"},
			{[]string{"--dsn", "neither-url-nor-file"}, cmdline.ExitUsage, "give --dialect"},
			{[]string{"--dialect", "postgres", "--db", file}, cmdline.ExitUsage, "--db names a database file"},
			{[]string{"--dialect", "oracle", "--dsn", "u:p@/db"}, cmdline.ExitFailure, "--dsn: oracle: invalid DSN: want oracle://"},
			{[]string{"--dialect", "sqlite", "--dsn", file, "--prefix", "No"}, cmdline.ExitUsage, "--prefix"},
			{[]string{"--dialect", "sqlite", "--dsn", ":memory:"}, cmdline.ExitFailure, "in-memory"},
			{[]string{"--dialect", "sqlite", "--dsn", filepath.Join(dir, "no", "such", "dir", "x.db")}, cmdline.ExitFailure, "sqlite: open"},
		} {
			code, _, errOut := cli(t, append(slices.Clone(cmd), c.args...)...)
			if code != c.code || !strings.Contains(errOut, c.want) {
				t.Errorf("%q %q: exit %d, stderr %q; want exit %d and %q", cmd, c.args, code, errOut, c.code, c.want)
			}
		}
	}
	latest := migrations.LatestVersion
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"migrate"}, "Usage: plenum migrate <up|down|status>"},
		{[]string{"migrate", "sideways"}, `unknown subcommand "sideways" (want up, down or status)`},
		{[]string{"migrate", "up", "--dialect", "sqlite", "--dsn", file, "--to", "0"}, fmt.Sprintf("--to 0: want a version from 1 to %d", latest)},
		{[]string{"migrate", "up", "--dialect", "sqlite", "--dsn", file, "--to", fmt.Sprint(latest + 1)}, fmt.Sprintf("--to %d: want a version from 1 to %d", latest+1, latest)},
		{[]string{"migrate", "down", "--dialect", "sqlite", "--dsn", file, "--to", "-2"}, fmt.Sprintf("--to -2: want a version from 0 to %d", latest)},
		{[]string{"migrate", "down", "--dialect", "sqlite", "--dsn", file, "--to", fmt.Sprint(latest + 1)}, fmt.Sprintf("--to %d: want a version from 0 to %d", latest+1, latest)},
	} {
		code, _, errOut := cli(t, c.args...)
		if code != cmdline.ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", c.args, code, errOut, cmdline.ExitUsage, c.want)
		}
	}
	assertEmptyDir(t, dir)
}

// up, status, down and status again, through the CLI, on SQLite and on
// each server database the environment names.
func TestMigrate_UpDownStatus(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		checkMigrateCycle(t, "sqlite", filepath.Join(t.TempDir(), "app.db"))
	})
	for _, name := range []string{postgres.Name, mysql.Name} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkMigrateCycle(t, name, conformance.Harness{Name: name}.DSN(t))
		})
	}
}

func checkMigrateCycle(t *testing.T, dialectName, dsn string) {
	t.Helper()
	prefix := fmt.Sprintf("pm%08x_", rand.Uint32())
	db := []string{"--dialect", dialectName, "--dsn", dsn, "--prefix", prefix}
	step := func(wantCode int, want []string, args ...string) string {
		t.Helper()
		code, out, errOut := cli(t, append(args, db...)...)
		if code != wantCode {
			t.Fatalf("%q: exit %d, want %d\n%s%s", args, code, wantCode, out, errOut)
		}
		for _, w := range want {
			if ok, _ := regexp.MatchString(w, out+errOut); !ok {
				t.Fatalf("%q: output lacks %q:\n%s%s", args, w, out, errOut)
			}
		}
		return out
	}
	t.Cleanup(func() {
		var out, errOut strings.Builder
		if code := run(context.Background(), append([]string{"migrate", "down", "--to", "0"}, db...), &out, &errOut); code != cmdline.ExitOK {
			t.Errorf("clean up: exit %d\n%s%s", code, out.String(), errOut.String())
		}
	})

	step(cmdline.ExitOK, []string{`at version 0; this build needs 14`, `(?m)^1 +init +pending +-$`, `(?m)^2 +runtime +pending +-$`, `(?m)^3 +pipelines +pending +-$`, `(?m)^4 +dashboard +pending +-$`, `(?m)^5 +lean +pending +-$`, `(?m)^6 +keyed +pending +-$`, `(?m)^7 +halts +pending +-$`, `(?m)^8 +flow +pending +-$`, `(?m)^9 +schedules +pending +-$`, `(?m)^10 +runcontext +pending +-$`, `(?m)^11 +idle_lanes +pending +-$`, `(?m)^12 +item_meta +pending +-$`, `(?m)^13 +progress +pending +-$`, `(?m)^14 +run_version +pending +-$`}, "migrate", "status")
	step(cmdline.ExitOK, []string{`has no version applied: nothing to roll back`}, "migrate", "down")
	step(cmdline.ExitOK, []string{`applied version 1; schema ` + prefix + `\* now at version 1`}, "migrate", "up", "--to", "1")
	step(cmdline.ExitOK, []string{`at version 1; this build needs 14`, `(?m)^1 +init +applied +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC$`, `(?m)^2 +runtime +pending +-$`}, "migrate", "status")
	step(cmdline.ExitOK, []string{`applied versions 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14; schema ` + prefix + `\* now at version 14`}, "migrate", "up")
	step(cmdline.ExitOK, []string{`at version 14; this build needs 14`, `(?m)^2 +runtime +applied +\d{4}-`, `(?m)^3 +pipelines +applied +\d{4}-`, `(?m)^4 +dashboard +applied +\d{4}-`, `(?m)^5 +lean +applied +\d{4}-`, `(?m)^6 +keyed +applied +\d{4}-`, `(?m)^7 +halts +applied +\d{4}-`, `(?m)^8 +flow +applied +\d{4}-`, `(?m)^9 +schedules +applied +\d{4}-`, `(?m)^10 +runcontext +applied +\d{4}-`, `(?m)^11 +idle_lanes +applied +\d{4}-`, `(?m)^12 +item_meta +applied +\d{4}-`, `(?m)^13 +progress +applied +\d{4}-`, `(?m)^14 +run_version +applied +\d{4}-`}, "migrate", "status")
	step(cmdline.ExitOK, []string{`rolled back version 14; schema ` + prefix + `\* now at version 13`}, "migrate", "down")
	step(cmdline.ExitOK, []string{`rolled back version 13; schema ` + prefix + `\* now at version 12`}, "migrate", "down")
	step(cmdline.ExitOK, []string{`rolled back version 12; schema ` + prefix + `\* now at version 11`}, "migrate", "down")
	step(cmdline.ExitOK, []string{`rolled back version 11; schema ` + prefix + `\* now at version 10`}, "migrate", "down")
	step(cmdline.ExitOK, []string{`rolled back version 10; schema ` + prefix + `\* now at version 9`}, "migrate", "down")
	step(cmdline.ExitOK, []string{`rolled back version 9; schema ` + prefix + `\* now at version 8`}, "migrate", "down")
	step(cmdline.ExitOK, []string{`rolled back version 8; schema ` + prefix + `\* now at version 7`}, "migrate", "down")
	step(cmdline.ExitOK, []string{`rolled back version 7; schema ` + prefix + `\* now at version 6`}, "migrate", "down")
	step(cmdline.ExitOK, []string{`rolled back version 6; schema ` + prefix + `\* now at version 5`}, "migrate", "down")
	step(cmdline.ExitOK, []string{`rolled back version 5; schema ` + prefix + `\* now at version 4`}, "migrate", "down")
	step(cmdline.ExitOK, []string{`rolled back version 4; schema ` + prefix + `\* now at version 3`}, "migrate", "down")
	step(cmdline.ExitOK, []string{`rolled back version 3; schema ` + prefix + `\* now at version 2`}, "migrate", "down")
	step(cmdline.ExitOK, []string{`rolled back version 2; schema ` + prefix + `\* now at version 1`}, "migrate", "down")
	step(cmdline.ExitUsage, []string{`say --to 0`}, "migrate", "down")
	step(cmdline.ExitOK, []string{`(?m)^2 +runtime +pending +-$`}, "migrate", "status")
	step(cmdline.ExitOK, []string{`rolled back version 1; schema ` + prefix + `\* now at version 0`}, "migrate", "down", "--to", "0")
	step(cmdline.ExitOK, []string{`at version 0`, `(?m)^1 +init +pending`}, "migrate", "status")
}

// A version a failed run left half done shows in status with what
// completes it, and up completes it. (SQLite's DDL is transactional, so the
// run that stopped half way is written by hand: its mark, a row with the
// version negated.)
func TestMigrateStatus_ShowsPartlyApplied(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "app.db")
	if code, out, errOut := cli(t, "migrate", "up", "--to", "1", "--dialect", "sqlite", "--dsn", path); code != cmdline.ExitOK {
		t.Fatalf("up: exit %d\n%s%s", code, out, errOut)
	}
	sdb, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	if _, err := sdb.Exec("INSERT INTO plenum_migrations (version, name, applied_at) VALUES (-2, 'runtime', 0)"); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, "migrate", "status", "--dialect", "sqlite", "--dsn", path)
	if code != cmdline.ExitOK || !strings.Contains(out, "at version 1;") ||
		!regexp.MustCompile(`(?m)^2 +runtime +partly applied +1970-01-01 00:00:00\.000 UTC$`).MatchString(out) ||
		!strings.Contains(out, "version 2 was left partly applied by a run that failed: run plenum migrate up to complete it") {
		t.Fatalf("status: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := cli(t, "migrate", "up", "--dialect", "sqlite", "--dsn", path); code != cmdline.ExitOK || !strings.Contains(out, "applied versions 2, 3") {
		t.Fatalf("up: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = cli(t, "migrate", "status", "--dialect", "sqlite", "--dsn", path)
	if code != cmdline.ExitOK || strings.Contains(out, "partly") || !regexp.MustCompile(`(?m)^2 +runtime +applied `).MatchString(out) {
		t.Fatalf("status after up: exit %d\n%s", code, out)
	}
}

// The golang-migrate files for MySQL say, in their header and on stderr,
// that the tool's DSN needs multiStatements=true.
func TestMigrationsGen_MySQLGolangMigrateNote(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	code, _, errOut := cli(t, "migrations", "gen", "--dialect", "mysql", "--format", "golang-migrate", "--out", dir)
	if code != cmdline.ExitOK || !strings.Contains(errOut, "note: golang-migrate sends each file whole: its DSN needs multiStatements=true") {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "0001_init.up.sql"))
	if err != nil || !strings.Contains(string(b), "\n-- golang-migrate sends each file whole: its DSN needs multiStatements=true") {
		t.Fatalf("the file's header lacks the note (%v):\n%.400s", err, b)
	}
	code, _, errOut = cli(t, "migrations", "gen", "--dialect", "mysql", "--format", "goose", "--out", t.TempDir())
	if code != cmdline.ExitOK || strings.Contains(errOut, "note:") {
		t.Fatalf("goose: exit %d, stderr %q", code, errOut)
	}
}
