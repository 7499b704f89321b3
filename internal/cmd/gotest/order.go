package main

import (
	"cmp"
	_ "embed"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// go test starts the packages' test binaries in the order it lists them,
// -p at a time, so a long package listed last runs alone at the end while
// the other slots idle. Where the arguments name the packages as "./..."
// alone, gotest lists them itself and gives them longest first, by the
// times of the last run it recorded (packages it has no time for first of
// all: they may be long). The times are kept in the user's cache
// directory; without them (a fresh machine, as CI's may be) the times of
// seedtimes.json stand in, those of one whole run with -race on a quiet
// machine: the order needs only the packages' rough sizes.

//go:embed seedtimes.json
var seedTimes []byte

// timesOr returns times, or the seed's where there are none.
func timesOr(times map[string]float64) map[string]float64 {
	if len(times) > 0 {
		return times
	}
	seed := map[string]float64{}
	_ = json.Unmarshal(seedTimes, &seed)
	return seed
}

// timesFile is where the packages' last times are kept.
func timesFile() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "plenum-gotest", "times.json")
}

// loadTimes reads the recorded times (seconds per package), or none.
func loadTimes(path string) map[string]float64 {
	times := map[string]float64{}
	if path == "" {
		return times
	}
	b, err := os.ReadFile(path)
	if err == nil {
		_ = json.Unmarshal(b, &times)
	}
	return times
}

// saveTimes records got over the times at path, best effort: a run that
// cannot write them only loses the order of the next.
func saveTimes(path string, got map[string]float64) {
	if path == "" || len(got) == 0 {
		return
	}
	times := loadTimes(path)
	for pkg, s := range got {
		times[pkg] = s
	}
	b, err := json.Marshal(times)
	if err != nil {
		return
	}
	if os.MkdirAll(filepath.Dir(path), 0o755) == nil {
		_ = os.WriteFile(path, b, 0o644)
	}
}

// longestFirst orders pkgs by their recorded time, longest first, those
// without a time before the others, ties in their given order.
func longestFirst(pkgs []string, times map[string]float64) []string {
	out := slices.Clone(pkgs)
	slices.SortStableFunc(out, func(a, b string) int {
		ta, oka := times[a]
		tb, okb := times[b]
		if !oka {
			ta = -1
		}
		if !okb {
			tb = -1
		}
		switch {
		case !oka && !okb:
			return 0
		case !oka:
			return -1
		case !okb:
			return 1
		}
		return cmp.Compare(tb, ta)
	})
	return out
}

// whole reports whether args run every test of their packages: the
// times of a run that chooses some tests (-run, -skip, -short, -list)
// would mislead the next run's order, so they are not recorded.
func whole(args []string) bool {
	for _, a := range args { // the binaries' own flags, after "--", too
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && slices.Contains([]string{"run", "skip", "short", "list", "test.run", "test.skip", "test.short", "test.list"}, name) {
			return false
		}
	}
	return true
}

// ordered returns args with a lone "./..." replaced by its packages,
// longest first; args as they are otherwise (other patterns, or flags
// that change which packages or files go list would see).
func ordered(args []string, times map[string]float64) []string {
	at := -1
	for i, a := range args {
		switch {
		case a == "--":
			return args
		case a == "./...":
			if at >= 0 {
				return args
			}
			at = i
		case strings.HasPrefix(a, "-tags") || strings.HasPrefix(a, "--tags") || strings.HasPrefix(a, "-mod") || strings.HasPrefix(a, "--mod"):
			return args
		case !strings.HasPrefix(a, "-") && (strings.HasPrefix(a, ".") || strings.Contains(a, "/")):
			return args // another package pattern
		}
	}
	if at < 0 || len(times) == 0 {
		return args
	}
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		return args
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) == 0 {
		return args
	}
	return slices.Concat(args[:at], longestFirst(pkgs, times), args[at+1:])
}
