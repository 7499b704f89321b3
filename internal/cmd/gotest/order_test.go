package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLongestFirst_UnknownThenLongest(t *testing.T) {
	t.Parallel()
	times := map[string]float64{"p/a": 1, "p/b": 300, "p/c": 20}
	got := longestFirst([]string{"p/a", "p/b", "p/new", "p/c", "p/new2"}, times)
	want := []string{"p/new", "p/new2", "p/b", "p/c", "p/a"}
	if !slices.Equal(got, want) {
		t.Errorf("longestFirst = %v, want %v", got, want)
	}
}

func TestOrdered_OnlyALoneDotDotDot(t *testing.T) {
	t.Parallel()
	times := map[string]float64{"x": 1}
	for _, args := range [][]string{
		{"-race", "./core", "./worker"},    // other patterns: as given
		{"./...", "./cmd/..."},             // two patterns
		{"-tags", "x", "./..."},            // build tags change go list's answer
		{"./x/...", "-run", "TestA"},       // not ./...
		{"-race", "./...", "--", "-v"},     // test binary flags
		{"-count=1", "github.com/a/b/..."}, // an import path pattern
	} {
		if got := ordered(args, times); !slices.Equal(got, args) {
			t.Errorf("ordered(%q) = %q, want it unchanged", args, got)
		}
	}
	if got := ordered([]string{"-race", "./..."}, nil); !slices.Equal(got, []string{"-race", "./..."}) {
		t.Errorf("without recorded times ordered changed the arguments: %q", got)
	}
}

func TestTimes_RoundTripAndMerge(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "d", "times.json")
	saveTimes(path, map[string]float64{"p/a": 2, "p/b": 3})
	saveTimes(path, map[string]float64{"p/b": 5})
	got := loadTimes(path)
	if got["p/a"] != 2 || got["p/b"] != 5 || len(got) != 2 {
		t.Errorf("times after two runs = %v, want p/a 2 and p/b 5", got)
	}
	if got := loadTimes(filepath.Join(t.TempDir(), "none.json")); len(got) != 0 {
		t.Errorf("no file: %v", got)
	}
}

func TestWhole_OnlyRunsOfEveryTestAreRecorded(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]bool{
		"-race -count=1 ./...":       true,
		"-run TestX ./...":           false,
		"-run=TestX ./...":           false,
		"-short ./...":               false,
		"-skip TestY ./...":          false,
		"./... -- -test.run TestX":   false,
		"-count=1 -timeout 5m ./...": true,
	} {
		if got := whole(strings.Fields(args)); got != want {
			t.Errorf("whole(%q) = %v, want %v", args, got, want)
		}
	}
}

// With recorded times, a lone "./..." becomes the packages go list gives
// for it (here, in this package's directory, this package alone), in
// its place among the other arguments.
func TestOrdered_ListsTheDotDotDotPackages(t *testing.T) {
	t.Parallel()
	got := ordered([]string{"-race", "./...", "-count=1"}, map[string]float64{"x": 1})
	want := []string{"-race", "github.com/plenumdb/plenum/internal/cmd/gotest", "-count=1"}
	if !slices.Equal(got, want) {
		t.Errorf("ordered = %q, want %q", got, want)
	}
}

// The seed stands in for recorded times on a fresh machine: it parses,
// names the long packages, and gives way to recorded times.
func TestTimesOr_SeedWhereNoneRecorded(t *testing.T) {
	seed := timesOr(nil)
	if len(seed) < 20 || seed["github.com/plenumdb/plenum/sqlite"] <= seed["github.com/plenumdb/plenum/dialect"] {
		t.Fatalf("seed times = %v: want every package, SQLite's among the long", seed)
	}
	got := timesOr(map[string]float64{"p/a": 1})
	if len(got) != 1 || got["p/a"] != 1 {
		t.Fatalf("timesOr with recorded times = %v, want them", got)
	}
}
