package cmdline_test

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/plenumdb/plenum/dialect/builtin"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
)

// parse registers the database flags on a new flag set and parses args.
func parse(t *testing.T, args ...string) cmdline.Database {
	t.Helper()
	var f cmdline.Database
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f.Register(fs, "", "to test")
	f.RegisterPrefix(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	return f
}

// Every command names its database with the same flags, and the DSN may
// come from the environment or a file instead of the command line.
func TestDatabase_ResolvesEveryWayOfNamingADatabase(t *testing.T) {
	const pg = "postgres://u:secret@db.example:5432/app"
	t.Setenv("PLENUM_TEST_DSN", pg)
	file := filepath.Join(t.TempDir(), "dsn")
	if err := os.WriteFile(file, []byte(pg+"\n# not read\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name        string
		args        []string
		fallback    string
		dialect     string
		dsn         string
		usageErrHas string
	}{
		{"dsn and dialect", []string{"--dialect", "postgres", "--dsn", pg}, "", "postgres", pg, ""},
		{"dsn's form names the dialect", []string{"--dsn", pg}, "", "postgres", pg, ""},
		{"alias", []string{"--dialect", "mariadb", "--dsn", "u@tcp(h:3306)/d"}, "", "mysql", "u@tcp(h:3306)/d", ""},
		{"dsn from the environment", []string{"--dsn-env", "PLENUM_TEST_DSN"}, "", "postgres", pg, ""},
		{"dsn from a file, first line", []string{"--dsn-file", file}, "", "postgres", pg, ""},
		{"db is sqlite", []string{"--db", "jobs.db"}, "", "sqlite", "jobs.db", ""},
		{"nothing, with a fallback", nil, "sqlite", "sqlite", "", ""},
		{"nothing, no fallback", nil, "", "", "", "missing --dialect"},
		{"two sources", []string{"--dsn", pg, "--dsn-env", "PLENUM_TEST_DSN"}, "", "", "", "give one"},
		{"unset variable", []string{"--dsn-env", "PLENUM_TEST_UNSET"}, "", "", "", "unset or empty"},
		{"missing file", []string{"--dsn-file", file + ".x"}, "", "", "", "no such file"},
		{"form of no dialect", []string{"--dsn", "x"}, "", "", "", "give --dialect"},
		{"db for a server", []string{"--dialect", "postgres", "--db", "a.db"}, "", "", "", "--db names a database file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, dsn, err := parse(t, c.args...).Resolve(c.fallback)
			if c.usageErrHas != "" {
				var ue *cmdline.UsageError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.usageErrHas) {
					t.Fatalf("Resolve = %v, want a usage error saying %q", err, c.usageErrHas)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Errorf("the error repeats the DSN's password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if r.Dialect.Name() != c.dialect || dsn != c.dsn {
				t.Errorf("Resolve = %s, %q; want %s, %q", r.Dialect.Name(), dsn, c.dialect, c.dsn)
			}
		})
	}
}

func TestDatabase_CheckPrefix(t *testing.T) {
	t.Parallel()
	if err := parse(t, "--prefix", "-").CheckPrefix(); err == nil || !strings.Contains(err.Error(), "--prefix") {
		t.Errorf("CheckPrefix(-) = %v, want an error naming --prefix", err)
	}
	if err := parse(t).CheckPrefix(); err != nil {
		t.Errorf("CheckPrefix(default) = %v", err)
	}
}
