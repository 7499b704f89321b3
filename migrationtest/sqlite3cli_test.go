package migrationtest

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/sqlite"
)

// The generated SQLite files run in the sqlite3 shell of the system
// (Debian's is SQLite 3.40, older than the 3.42 that unixepoch('subsec')
// needs, and newer than the 3.35 the dialect requires): up, down, up
// again, then a store opened without migrating works on the result.
func TestSQLite3Shell_UpDownUp(t *testing.T) {
	t.Parallel()
	shell, err := exec.LookPath("sqlite3")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("no sqlite3 shell on PATH (CI installs it)")
		}
		t.Skip("no sqlite3 shell on PATH: install it (apt-get install sqlite3) to run the generated files there")
	}
	out, err := exec.Command(shell, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sqlite3 shell: %s", strings.TrimSpace(string(out)))

	dir := t.TempDir()
	path := filepath.Join(dir, "shell.db")
	paths, err := migrations.WriteFiles(filepath.Join(dir, "migrations"), sqlite.Dialect(), migrations.DefaultPrefix, migrations.FormatPlain)
	if err != nil {
		t.Fatal(err)
	}
	var ups, downs []string
	for _, p := range paths {
		if strings.HasSuffix(p, ".up.sql") {
			ups = append(ups, p)
		} else {
			downs = append(downs, p)
		}
	}
	slices.Reverse(downs)
	run := func(files []string) {
		t.Helper()
		for _, f := range files {
			script, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(shell, "-bail", path)
			cmd.Stdin = strings.NewReader(string(script))
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("sqlite3 %s < %s: %v\n%s", path, filepath.Base(f), err, out)
			}
		}
	}
	run(ups)
	run(downs)
	db, err := sql.Open(sqlite.DriverName, path)
	if err != nil {
		t.Fatal(err)
	}
	var objects int
	if err := db.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM sqlite_master").Scan(&objects); err != nil || objects != 0 {
		t.Fatalf("%d objects left after the down files, %v", objects, err)
	}
	db.Close()
	run(ups)

	// The shell's database in WAL mode, as the dialect needs, and a store.
	sdb := must(t, func() (*sql.DB, error) { return sqlite.Open(path) })
	checkApplied(t, sdb, sqlite.Dialect(), migrations.DefaultPrefix)
}
