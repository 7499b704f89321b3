package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
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

// TestPage_ShowsThisProgram keeps docs/examples.md's pipeline and this
// file the same, within 60 lines of at most 100 columns.
func TestPage_ShowsThisProgram(t *testing.T) {
	t.Parallel()
	readmetest.SameFile(t, "../../examples.md", "## A pipeline", "main.go")
	readmetest.Fits(t, "main.go", 60, 100)
}

// TestProgram_PricesEachItemThenWaitsForApproval runs the program as a
// process: the run fans out over the order's three items, collapses their
// prices into a total, takes the approval signal the program sent, and
// completes with an output naming all three; the program prints it and
// exits with status 0, its worker deregistered.
func TestProgram_PricesEachItemThenWaitsForApproval(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "pipeline.db")
	p := readmetest.StartProgram(t, "-db", db)
	out, err := p.Exit(t, 2*time.Minute)
	if err != nil {
		t.Errorf("the program exited with %v, want status 0", err)
	}
	want := []string{`completed "3 items, 1200 cents, approved by ada"`}
	if !slices.Equal(out, want) {
		t.Errorf("the program printed %q, want %q", out, want)
	}

	ctx := context.Background()
	sdb, err := sqlite.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	store, err := core.Open(ctx, sdb, sqlite.Dialect(), core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// One step expands, three price the items, one collapses, one awaits.
	n, err := store.Counts(ctx, "runs")
	if err != nil {
		t.Fatal(err)
	}
	if n[core.StateCompleted] != 6 || len(n) != 1 {
		t.Errorf("steps by state %v, want 6 completed", n)
	}
	var owners int
	if err := sdb.QueryRowContext(ctx, "SELECT COUNT(*) FROM plenum_processes").Scan(&owners); err != nil {
		t.Fatal(err)
	}
	if owners != 0 {
		t.Errorf("workers still registered: %d; the program did not stop cleanly", owners)
	}
}
