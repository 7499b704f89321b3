package migrations_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/migrations/internal/generate"
	"github.com/plenumdb/plenum/sqlite"
)

const prefix = migrations.DefaultPrefix

var (
	wantTables  = []string{"plenum_attempts", "plenum_barriers", "plenum_item_meta", "plenum_items", "plenum_lanes", "plenum_migrations", "plenum_processes", "plenum_progress", "plenum_queues", "plenum_run_context", "plenum_runs", "plenum_schedules", "plenum_signals"}
	wantIndexes = []string{"plenum_barriers_owner", "plenum_barriers_run", "plenum_barriers_unfired", "plenum_item_meta_name", "plenum_item_meta_value", "plenum_items_barrier", "plenum_items_browse", "plenum_items_claim", "plenum_items_finished", "plenum_items_flow", "plenum_items_flowing", "plenum_items_keyed",
		"plenum_items_lease", "plenum_items_owner", "plenum_items_run", "plenum_lanes_idle", "plenum_lanes_key", "plenum_lanes_next", "plenum_processes_heartbeat", "plenum_runs_browse", "plenum_runs_key", "plenum_runs_state", "plenum_signals_key"}
	// allVersions lists every version of this build, oldest first.
	allVersions = func() []int {
		var out []int
		for v := 1; v <= migrations.LatestVersion; v++ {
			out = append(out, v)
		}
		return out
	}()
	// future is a version this build does not know.
	future = migrations.LatestVersion + 1
)

func openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "test.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// objects lists the names of sqlite_master's objects of a type, leaving
// out SQLite's own automatic indexes.
func objects(t *testing.T, db *sql.DB, typ string) []string {
	t.Helper()
	rows, err := db.Query("SELECT name FROM sqlite_master WHERE type = ? AND name NOT LIKE 'sqlite_%' ORDER BY name", typ)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return names
}

func checkSchema(t *testing.T, db *sql.DB) {
	t.Helper()
	if got := objects(t, db, "table"); !slices.Equal(got, wantTables) {
		t.Errorf("tables = %v, want %v", got, wantTables)
	}
	if got := objects(t, db, "index"); !slices.Equal(got, wantIndexes) {
		t.Errorf("indexes = %v, want %v", got, wantIndexes)
	}
}

func version(t *testing.T, db *sql.DB, d dialect.Dialect) int {
	t.Helper()
	v, err := migrations.Version(context.Background(), db, d, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestGeneratedFilesUpToDate(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	if _, err := generate.Run(tmp); err != nil {
		t.Fatal(err)
	}
	for _, d := range generate.Dialects() {
		want := readDir(t, filepath.Join(tmp, d.Name()))
		got := readDir(t, d.Name())
		for name, content := range want {
			if have, ok := got[name]; !ok {
				t.Errorf("migrations/%s/%s is missing; run `go generate ./migrations`", d.Name(), name)
			} else if !bytes.Equal(have, content) {
				t.Errorf("migrations/%s/%s is out of date; run `go generate ./migrations`", d.Name(), name)
			}
		}
		for name, content := range got {
			if _, ok := want[name]; !ok && bytes.HasPrefix(content, []byte(migrations.GeneratedHeader)) {
				t.Errorf("migrations/%s/%s is no longer generated; run `go generate ./migrations`", d.Name(), name)
			}
		}
	}
}

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

// The checked-in SQLite files apply to a fresh database, again on top of
// themselves and of Apply, and their down file leaves nothing behind.
func TestGeneratedSQLiteFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := sqlite.Dialect()
	// Every up file in order, every down file in reverse order, each as one
	// script.
	var up, down []byte
	for _, m := range migrations.All(prefix) {
		base := filepath.Join("sqlite", fmt.Sprintf("%04d_%s", m.Version, m.Name))
		u, err := os.ReadFile(base + ".up.sql")
		if err != nil {
			t.Fatal(err)
		}
		dn, err := os.ReadFile(base + ".down.sql")
		if err != nil {
			t.Fatal(err)
		}
		up = append(append(up, u...), '\n')
		down = append(append(dn, '\n'), down...)
	}
	db := openDB(t)
	if _, err := db.ExecContext(ctx, string(up)); err != nil {
		t.Fatalf("up files: %v", err)
	}
	checkSchema(t, db)
	if v := version(t, db, d); v != migrations.LatestVersion {
		t.Fatalf("version after the up files = %d", v)
	}
	if applied, err := migrations.Apply(ctx, db, d, prefix); err != nil || len(applied) != 0 {
		t.Fatalf("Apply after the up files = %v, %v; want nothing to do", applied, err)
	}
	if _, err := db.ExecContext(ctx, string(down)); err != nil {
		t.Fatalf("down files: %v", err)
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM sqlite_master").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d objects left after the down files, %v", n, err)
	}
	if v := version(t, db, d); v != 0 {
		t.Fatalf("version after the down files = %d", v)
	}

	// Version 1's up file runs again on top of itself and of Apply: its
	// statements say IF NOT EXISTS and its version row is skipped. (Version
	// 2 adds a column, which SQLite cannot say IF NOT EXISTS of.)
	v1, err := os.ReadFile(filepath.Join("sqlite", "0001_init.up.sql"))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := db.ExecContext(ctx, string(v1)); err != nil {
			t.Fatalf("version 1's up file: %v", err)
		}
	}
	if v := version(t, db, d); v != 1 {
		t.Fatalf("version after version 1's up file = %d", v)
	}
	if _, err := migrations.Apply(ctx, db, d, prefix); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, string(v1)); err != nil {
		t.Fatalf("version 1's up file after Apply: %v", err)
	}
	// It creates again what a later version dropped, and nothing else.
	want := slices.Sorted(slices.Values(append(slices.Clone(wantIndexes), "plenum_items_key")))
	if got := objects(t, db, "index"); !slices.Equal(got, want) {
		t.Errorf("indexes after version 1's up file on the latest = %v, want %v", got, want)
	}
}

func TestApply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := sqlite.Dialect()
	db := openDB(t)
	if v := version(t, db, d); v != 0 {
		t.Fatalf("version of a fresh database = %d", v)
	}
	start := time.Now()
	applied, err := migrations.Apply(ctx, db, d, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(applied, allVersions) {
		t.Fatalf("applied %v, want %v", applied, allVersions)
	}
	checkSchema(t, db)
	if v := version(t, db, d); v != migrations.LatestVersion {
		t.Fatalf("version = %d, want %d", v, migrations.LatestVersion)
	}
	var name string
	var at any
	if err := db.QueryRow("SELECT name, applied_at FROM plenum_migrations WHERE version = 1").Scan(&name, &at); err != nil {
		t.Fatal(err)
	}
	appliedAt, err := d.ScanTime(at)
	if err != nil || name != "init" || appliedAt.Before(start.Add(-time.Minute)) || appliedAt.After(time.Now().Add(time.Minute)) {
		t.Fatalf("version row: %q at %v, %v", name, appliedAt, err)
	}

	applied, err = migrations.Apply(ctx, db, d, prefix)
	if err != nil || len(applied) != 0 {
		t.Fatalf("second Apply = %v, %v; want nothing", applied, err)
	}

	// Another prefix is another schema, side by side.
	if applied, err := migrations.Apply(ctx, db, d, "other_"); err != nil || !slices.Equal(applied, allVersions) {
		t.Fatalf("Apply under another prefix = %v, %v", applied, err)
	}
}

func TestApplyConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := sqlite.Dialect()
	path := filepath.Join(t.TempDir(), "test.db")
	// Two *sql.DB handles, as two processes would have, four callers each.
	var dbs []*sql.DB
	for range 2 {
		db, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		dbs = append(dbs, db)
	}
	const callers = 8
	var wg sync.WaitGroup
	results := make(chan []int, callers)
	errs := make(chan error, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			applied, err := migrations.Apply(ctx, dbs[i%len(dbs)], d, prefix)
			if err != nil {
				errs <- err
				return
			}
			results <- applied
		}()
	}
	wg.Wait()
	close(errs)
	close(results)
	for err := range errs {
		t.Error(err)
	}
	var total []int
	for r := range results {
		total = append(total, r...)
	}
	slices.Sort(total)
	if !slices.Equal(total, allVersions) {
		t.Fatalf("versions applied across all callers = %v, want %v once each", total, allVersions)
	}
	var n int
	if err := dbs[0].QueryRow("SELECT COUNT(*) FROM plenum_migrations").Scan(&n); err != nil || n != len(allVersions) {
		t.Fatalf("%d version rows, want %d, %v", n, len(allVersions), err)
	}
	checkSchema(t, dbs[0])
}

func TestDrop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := sqlite.Dialect()
	db := openDB(t)
	if _, err := db.Exec("CREATE TABLE plenum_keep (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := migrations.Apply(ctx, db, d, prefix); err != nil {
			t.Fatal(err)
		}
		if err := migrations.Drop(ctx, db, d, prefix); err != nil {
			t.Fatal(err)
		}
		if got := objects(t, db, "table"); !slices.Equal(got, []string{"plenum_keep"}) {
			t.Fatalf("tables after Drop = %v", got)
		}
		if got := objects(t, db, "index"); len(got) != 0 {
			t.Fatalf("indexes after Drop = %v", got)
		}
		if v := version(t, db, d); v != 0 {
			t.Fatalf("version after Drop = %d", v)
		}
	}
	if err := migrations.Drop(ctx, db, d, prefix); err != nil {
		t.Fatalf("Drop with nothing to drop: %v", err)
	}
}

func TestInvalidPrefix(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := sqlite.Dialect()
	db := openDB(t)
	dir := filepath.Join(t.TempDir(), "out")
	for _, bad := range []string{"", "Plenum_", "1x", "x-y", "x; DROP TABLE t; --", strings.Repeat("a", migrations.MaxPrefixLen+1)} {
		if _, err := migrations.Apply(ctx, db, d, bad); !errors.Is(err, migrations.ErrInvalidPrefix) {
			t.Errorf("Apply(%q) = %v", bad, err)
		}
		if _, err := migrations.Version(ctx, db, d, bad); !errors.Is(err, migrations.ErrInvalidPrefix) {
			t.Errorf("Version(%q) = %v", bad, err)
		}
		if err := migrations.Drop(ctx, db, d, bad); !errors.Is(err, migrations.ErrInvalidPrefix) {
			t.Errorf("Drop(%q) = %v", bad, err)
		}
		if _, err := migrations.WriteFiles(dir, d, bad, migrations.FormatPlain); !errors.Is(err, migrations.ErrInvalidPrefix) {
			t.Errorf("WriteFiles(%q) = %v", bad, err)
		}
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM sqlite_master").Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d objects created by refused calls, %v", n, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("refused WriteFiles created %s: %v", dir, err)
	}
}

func TestNilArguments(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := sqlite.Dialect()
	db := openDB(t)
	if _, err := migrations.Apply(ctx, nil, d, prefix); err == nil {
		t.Error("Apply(nil db) succeeded")
	}
	if _, err := migrations.Apply(ctx, db, nil, prefix); err == nil {
		t.Error("Apply(nil dialect) succeeded")
	}
	if _, err := migrations.Version(ctx, nil, d, prefix); err == nil {
		t.Error("Version(nil db) succeeded")
	}
	if err := migrations.Drop(ctx, db, nil, prefix); err == nil {
		t.Error("Drop(nil dialect) succeeded")
	}
	if _, err := migrations.WriteFiles("", d, prefix, migrations.FormatPlain); err == nil {
		t.Error("WriteFiles(empty dir) succeeded")
	}
	if up, down := migrations.Statements(nil, migrations.All(prefix)[0]); up != nil || down != nil {
		t.Error("Statements(nil dialect) rendered something")
	}
	closed := openDB(t)
	closed.Close()
	if _, err := migrations.Apply(ctx, closed, d, prefix); err == nil {
		t.Error("Apply on a closed database succeeded")
	}
	if _, err := migrations.Version(ctx, closed, d, prefix); err == nil {
		t.Error("Version on a closed database succeeded")
	}
	if _, err := migrations.Version(ctx, closed, ddlCommits{Dialect: d}, prefix); err == nil {
		t.Error("Version without a prober on a closed database succeeded")
	}
}

// A migrations table that exists but cannot be read is an error, not 0.
func TestVersionBrokenTable(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	if _, err := db.Exec("CREATE TABLE plenum_migrations (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	if v, err := migrations.Version(context.Background(), db, sqlite.Dialect(), prefix); err == nil {
		t.Fatalf("Version = %d, want an error", v)
	}
}

func TestStatements(t *testing.T) {
	t.Parallel()
	up, down := migrations.Statements(sqlite.Dialect(), migrations.All(prefix)[0])
	if len(up) != 3+8 {
		t.Fatalf("%d up statements, want 11", len(up))
	}
	want := []string{"DROP TABLE IF EXISTS plenum_barriers", "DROP TABLE IF EXISTS plenum_processes", "DROP TABLE IF EXISTS plenum_items"}
	if !slices.Equal(down, want) {
		t.Fatalf("down = %v, want %v", down, want)
	}
}

func TestWriteFiles(t *testing.T) {
	t.Parallel()
	d := sqlite.Dialect()
	header := migrations.GeneratedHeader + "\n-- Dialect sqlite, table prefix \"p_\".\n"
	for _, c := range []struct {
		format string
		names  []string
	}{
		{migrations.FormatPlain, []string{"0001_init.up.sql", "0001_init.down.sql", "0002_runtime.up.sql", "0002_runtime.down.sql", "0003_pipelines.up.sql", "0003_pipelines.down.sql", "0004_dashboard.up.sql", "0004_dashboard.down.sql", "0005_lean.up.sql", "0005_lean.down.sql", "0006_keyed.up.sql", "0006_keyed.down.sql", "0007_halts.up.sql", "0007_halts.down.sql", "0008_flow.up.sql", "0008_flow.down.sql", "0009_schedules.up.sql", "0009_schedules.down.sql", "0010_runcontext.up.sql", "0010_runcontext.down.sql", "0011_idle_lanes.up.sql", "0011_idle_lanes.down.sql", "0012_item_meta.up.sql", "0012_item_meta.down.sql", "0013_progress.up.sql", "0013_progress.down.sql", "0014_run_version.up.sql", "0014_run_version.down.sql"}},
		{migrations.FormatGolangMigrate, []string{"0001_init.up.sql", "0001_init.down.sql", "0002_runtime.up.sql", "0002_runtime.down.sql", "0003_pipelines.up.sql", "0003_pipelines.down.sql", "0004_dashboard.up.sql", "0004_dashboard.down.sql", "0005_lean.up.sql", "0005_lean.down.sql", "0006_keyed.up.sql", "0006_keyed.down.sql", "0007_halts.up.sql", "0007_halts.down.sql", "0008_flow.up.sql", "0008_flow.down.sql", "0009_schedules.up.sql", "0009_schedules.down.sql", "0010_runcontext.up.sql", "0010_runcontext.down.sql", "0011_idle_lanes.up.sql", "0011_idle_lanes.down.sql", "0012_item_meta.up.sql", "0012_item_meta.down.sql", "0013_progress.up.sql", "0013_progress.down.sql", "0014_run_version.up.sql", "0014_run_version.down.sql"}},
		{migrations.FormatGoose, []string{"0001_init.sql", "0002_runtime.sql", "0003_pipelines.sql", "0004_dashboard.sql", "0005_lean.sql", "0006_keyed.sql", "0007_halts.sql", "0008_flow.sql", "0009_schedules.sql", "0010_runcontext.sql", "0011_idle_lanes.sql", "0012_item_meta.sql", "0013_progress.sql", "0014_run_version.sql"}},
	} {
		dir := filepath.Join(t.TempDir(), "nested", c.format)
		paths, err := migrations.WriteFiles(dir, d, "p_", c.format)
		if err != nil {
			t.Fatalf("%s: %v", c.format, err)
		}
		var names []string
		for _, p := range paths {
			names = append(names, filepath.Base(p))
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			s := string(b)
			if !strings.HasPrefix(s, header) {
				t.Errorf("%s: %s starts %q", c.format, p, s[:min(len(s), 120)])
			}
			if strings.Contains(s, "plenum_") || strings.Contains(s, ";;") || strings.Contains(s, "\n\n\n") {
				t.Errorf("%s: %s has a wrong prefix or separator:\n%s", c.format, p, s)
			}
			if strings.HasSuffix(p, "0001_init.up.sql") {
				checkUp(t, s)
			}
		}
		if !slices.Equal(names, c.names) {
			t.Errorf("%s wrote %v, want %v", c.format, names, c.names)
		}
		if c.format != migrations.FormatGoose {
			continue
		}
		b, _ := os.ReadFile(paths[0])
		s := string(b)
		upAt, downAt := strings.Index(s, "\n-- +goose Up\n"), strings.Index(s, "\n-- +goose Down\n")
		if upAt < 0 || downAt < upAt {
			t.Fatalf("goose file sections out of order:\n%s", s)
		}
		checkUp(t, s[upAt:downAt])
		if strings.Contains(s, "StatementBegin") || strings.Contains(s, "NO TRANSACTION") {
			t.Errorf("goose file has annotations SQLite does not need:\n%s", s)
		}
		if !strings.Contains(s[downAt:], "DELETE FROM p_migrations WHERE version = 1;") {
			t.Errorf("goose down section does not forget its version:\n%s", s[downAt:])
		}
	}

	_, err := migrations.WriteFiles(t.TempDir(), d, prefix, "flyway")
	if !errors.Is(err, migrations.ErrUnknownFormat) || !strings.Contains(err.Error(), "plain, golang-migrate, goose") {
		t.Fatalf("unknown format: %v", err)
	}
}

func checkUp(t *testing.T, s string) {
	t.Helper()
	for _, want := range []string{"CREATE TABLE IF NOT EXISTS p_migrations", "CREATE TABLE IF NOT EXISTS p_items",
		"INSERT INTO p_migrations (version, name, applied_at) VALUES (1, 'init', "} {
		if !strings.Contains(s, want) {
			t.Errorf("up file lacks %q:\n%s", want, s)
		}
	}
}

// ddlCommits is SQLite pretending that its DDL commits on its own, as MySQL's
// does, to run the migrator's statement-by-statement path. It hides the
// TableProber too. broken names an index it renders wrongly, to fail a
// migration half way.
type ddlCommits struct {
	dialect.Dialect
	broken string
}

func (d ddlCommits) Capabilities() dialect.Capabilities {
	c := d.Dialect.Capabilities()
	c.TransactionalDDL = false
	return c
}

func (d ddlCommits) CreateIndex(table string, ix dialect.Index) []string {
	if ix.Name == d.broken {
		return []string{"CREATE INDEX " + ix.Name + " ON no_such_table (x)"}
	}
	return d.Dialect.CreateIndex(table, ix)
}

func TestApplyWithoutTransactionalDDL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := openDB(t)
	if v := version(t, db, ddlCommits{Dialect: sqlite.Dialect()}); v != 0 {
		t.Fatalf("version without a prober = %d", v)
	}

	// Fails half way: the tables before the broken index exist, no version.
	broken := ddlCommits{Dialect: sqlite.Dialect(), broken: "plenum_items_lease"}
	if _, err := migrations.Apply(ctx, db, broken, prefix); err == nil || !strings.Contains(err.Error(), "partly applied: run Apply") {
		t.Fatalf("Apply with a broken statement = %v", err)
	}
	if got := objects(t, db, "table"); !slices.Equal(got, []string{"plenum_items", "plenum_migrations"}) {
		t.Fatalf("tables after a half-applied migration = %v", got)
	}
	if v := version(t, db, broken); v != 0 {
		t.Fatalf("version after a half-applied migration = %d", v)
	}

	// Running Apply again completes it.
	fixed := ddlCommits{Dialect: sqlite.Dialect()}
	applied, err := migrations.Apply(ctx, db, fixed, prefix)
	if err != nil || !slices.Equal(applied, allVersions) {
		t.Fatalf("second Apply = %v, %v", applied, err)
	}
	checkSchema(t, db)
	if v := version(t, db, fixed); v != migrations.LatestVersion {
		t.Fatalf("version = %d", v)
	}
	if applied, err := migrations.Apply(ctx, db, fixed, prefix); err != nil || len(applied) != 0 {
		t.Fatalf("third Apply = %v, %v", applied, err)
	}
	if err := migrations.Drop(ctx, db, fixed, prefix); err != nil {
		t.Fatal(err)
	}
	if got := objects(t, db, "table"); len(got) != 0 {
		t.Fatalf("tables after Drop = %v", got)
	}

	// Its goose file says it cannot be one transaction.
	files, err := migrations.Render(fixed, prefix, migrations.FormatGoose)
	if err != nil || len(files) != len(allVersions) || !strings.Contains(string(files[0].Content), "\n-- +goose NO TRANSACTION\n") {
		t.Fatalf("goose file without transactional DDL: %v", err)
	}
}

// semicolons renders statements with a ';' inside, as a PL/SQL block
// would be, to check that goose keeps them whole.
type semicolons struct{ dialect.Dialect }

func (semicolons) DropTable(table string) []string {
	return []string{"BEGIN\n  EXECUTE IMMEDIATE 'DROP TABLE " + table + "';\nEND;"}
}

func TestGooseStatementBlocks(t *testing.T) {
	t.Parallel()
	files, err := migrations.Render(semicolons{sqlite.Dialect()}, prefix, migrations.FormatGoose)
	if err != nil {
		t.Fatal(err)
	}
	s := string(files[0].Content)
	want := "-- +goose StatementBegin\nBEGIN\n  EXECUTE IMMEDIATE 'DROP TABLE plenum_barriers';\nEND;\n-- +goose StatementEnd\n"
	if !strings.Contains(s, want) {
		t.Fatalf("goose file does not wrap a block:\n%s", s)
	}
	if strings.Contains(s[:strings.Index(s, "-- +goose Down")], "StatementBegin") {
		t.Fatalf("goose file wraps statements that need no wrapping:\n%s", s)
	}
}

// Up, Down and Status refuse what they cannot do, and a version applied by
// a newer build shows in Status and is never rolled back blindly.
func TestUpDownStatus_Edges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := sqlite.Dialect()
	db := openDB(t)
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"Up(0)", func() error { _, err := migrations.Up(ctx, db, d, prefix, 0); return err }(), fmt.Sprintf("version 0: this build knows versions 1 to %d", future-1)},
		{"Up(future)", func() error { _, err := migrations.Up(ctx, db, d, prefix, future); return err }(), fmt.Sprintf("version %d: this build knows versions 1 to %d", future, future-1)},
		{"Down(-1)", func() error { _, err := migrations.Down(ctx, db, d, prefix, -1); return err }(), fmt.Sprintf("version -1: this build knows versions 0 to %d", future-1)},
		{"Down(nil db)", func() error { _, err := migrations.Down(ctx, nil, d, prefix, 0); return err }(), "nil database"},
		{"Status(nil dialect)", func() error { _, err := migrations.Status(ctx, db, nil, prefix); return err }(), "nil database or dialect"},
		{"Status(bad prefix)", func() error { _, err := migrations.Status(ctx, db, d, "X"); return err }(), "invalid table prefix"},
		{"Down(bad prefix)", func() error { _, err := migrations.Down(ctx, db, d, "X", 0); return err }(), "invalid table prefix"},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s = %v, want %q", c.name, c.err, c.want)
		}
	}

	if _, err := migrations.Apply(ctx, db, d, prefix); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO plenum_migrations (version, name, applied_at) VALUES (?, 'future', 0)", future); err != nil {
		t.Fatal(err)
	}
	st, err := migrations.Status(ctx, db, d, prefix)
	if err != nil || len(st) != future || !st[future-1].Unknown || st[future-1].State != migrations.Applied || st[future-1].Name != "future" {
		t.Fatalf("Status with a newer version = %+v, %v", st, err)
	}
	if v := version(t, db, d); v != future {
		t.Fatalf("Version = %d, want %d", v, future)
	}
	if _, err := migrations.Down(ctx, db, d, prefix, 1); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("version %d (future) was applied by a newer build", future)) {
		t.Fatalf("Down past a newer version = %v", err)
	}
	if _, err := migrations.Down(ctx, db, d, prefix, future-1); err == nil {
		t.Fatalf("Down(%d) under a newer version %d succeeded", future-1, future)
	}
	checkSchema(t, db)
}
