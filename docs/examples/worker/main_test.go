package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/readmetest"
	"github.com/plenumdb/plenum/sqlite"
)

func TestMain(m *testing.M) {
	readmetest.RunMain(main)
	os.Exit(m.Run())
}

// TestPage_ShowsThisProgram keeps docs/examples.md's worker and this file
// the same, within 50 lines of at most 100 columns.
func TestPage_ShowsThisProgram(t *testing.T) {
	t.Parallel()
	readmetest.SameFile(t, "../../examples.md", "## A worker", "main.go")
	readmetest.Fits(t, "main.go", 50, 100)
}

// TestProgram_RetriesThenStopsCleanlyOnInterruptOrTerminate runs the
// program as a process in a directory of its own: both kinds' jobs
// complete with their results, the resize on its second attempt after the
// first failed, and on Ctrl-C (SIGINT) or SIGTERM (a container's stop) it
// exits with status 0, having recorded every outcome and deregistered.
func TestProgram_RetriesThenStopsCleanlyOnInterruptOrTerminate(t *testing.T) {
	t.Parallel()
	for name, sig := range map[string]syscall.Signal{"SIGINT": syscall.SIGINT, "SIGTERM": syscall.SIGTERM} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			p := readmetest.StartProgramIn(t, dir)
			db := filepath.Join(dir, "jobs.db")
			want := []string{
				`email.welcome "welcomed ada@example.com on attempt 1"`,
				`photo.resize "resized cat.png on attempt 2"`,
			}
			if got := awaitResults(t, db, len(want)); !slices.Equal(got, want) {
				t.Errorf("the results are\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			p.Signal(t, sig)
			if _, err := p.Exit(t, time.Minute); err != nil {
				t.Errorf("after %s the program exited with %v, want status 0", name, err)
			}
			checkStoppedCleanly(t, db)
		})
	}
}

// awaitResults polls the program's database, as another process would,
// until n items have completed, and returns each one's kind and result,
// sorted. It fails t if that takes over two minutes.
func awaitResults(t *testing.T, path string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if got := results(path); len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d items completed after two minutes", len(results(path)), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// results reads the completed items' kinds and results, sorted; none
// while the program has not made its tables yet.
func results(path string) []string {
	db, err := sqlite.Open(path)
	if err != nil {
		return nil
	}
	defer db.Close()
	rows, err := db.Query("SELECT kind, result FROM plenum_items WHERE state = 'completed' ORDER BY kind")
	if err != nil {
		return nil
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var kind, result string
		if rows.Scan(&kind, &result) == nil {
			out = append(out, kind+" "+result)
		}
	}
	return out
}

// checkStoppedCleanly reads the program's database once it has exited:
// every item completed, and no worker left registered for a reaper.
func checkStoppedCleanly(t *testing.T, path string) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	store, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := store.Counts(ctx, "app")
	if err != nil {
		t.Fatal(err)
	}
	if n[core.StateCompleted] != 2 || len(n) != 1 {
		t.Errorf("items by state %v, want the 2 completed", n)
	}
	var owners int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM plenum_processes").Scan(&owners); err != nil {
		t.Fatal(err)
	}
	if owners != 0 {
		t.Errorf("workers still registered: %d; the program did not stop cleanly", owners)
	}
}
