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
// the same, within 60 lines of at most 100 columns: the 42 of the
// README's worker, a second kind and its type, the retry, the flag for
// the file, and a line split to stay within 100 columns. (50 was the aim;
// gofmt'd, with every error handled, this is as short as it reads well.)
func TestPage_ShowsThisProgram(t *testing.T) {
	t.Parallel()
	readmetest.SameFile(t, "../../examples.md", "## A worker", "main.go")
	readmetest.Fits(t, "main.go", 60, 100)
}

// TestProgram_RetriesThenStopsCleanlyOnInterruptOrTerminate runs the
// program as a process: both kinds' jobs complete, each resize on its
// second attempt after the first failed, and on Ctrl-C (SIGINT) or SIGTERM
// (a container's stop) it says it stopped and exits with status 0, having
// recorded every outcome and deregistered.
func TestProgram_RetriesThenStopsCleanlyOnInterruptOrTerminate(t *testing.T) {
	t.Parallel()
	for name, sig := range map[string]syscall.Signal{"SIGINT": syscall.SIGINT, "SIGTERM": syscall.SIGTERM} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "worker.db")
			p := readmetest.StartProgram(t, "-db", db)
			want := []string{
				"resized cat.png on attempt 2",
				"resized dog.png on attempt 2",
				"welcomed ada@example.com on attempt 1",
				"welcomed grace@example.com on attempt 1",
			}
			var got []string
			p.Await(t, 2*time.Minute, "every job done", func(line string) bool {
				got = append(got, line)
				return len(got) == len(want)
			})
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("the program printed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			p.Signal(t, sig)
			rest, err := p.Exit(t, time.Minute)
			if err != nil {
				t.Errorf("the program exited with %v, want status 0", err)
			}
			if !slices.Equal(rest, []string{"stopped cleanly"}) {
				t.Errorf("after %s the program printed %q, want \"stopped cleanly\"", name, rest)
			}
			checkStoppedCleanly(t, db)
		})
	}
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
	if n[core.StateCompleted] != 4 || len(n) != 1 {
		t.Errorf("items by state %v, want the 4 completed", n)
	}
	var owners int
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM plenum_processes").Scan(&owners); err != nil {
		t.Fatal(err)
	}
	if owners != 0 {
		t.Errorf("workers still registered: %d; the program did not stop cleanly", owners)
	}
}
