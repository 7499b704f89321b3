package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// assertEmptyDir fails the test if dir holds anything: a command line
// refused before it opened a database must leave no file behind.
func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("a refused command line left %s behind", filepath.Join(dir, e.Name()))
	}
}

// dirEntries lists the names in the test's working directory, the
// package's source directory.
func dirEntries() ([]string, error) {
	entries, err := os.ReadDir(".")
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

// strayFiles names what appeared in the package directory since before:
// every test writes under t.TempDir(), so a new file there (a database
// created by a relative --db or --dsn) is a test bug that ends up
// committed. What go test itself was asked to write there (profiles, the
// kept test binary) is not counted.
func strayFiles(before []string) ([]string, error) {
	after, err := dirEntries()
	if err != nil {
		return nil, err
	}
	asked := map[string]bool{}
	for _, name := range []string{"test.cpuprofile", "test.memprofile", "test.blockprofile", "test.mutexprofile", "test.trace", "test.coverprofile"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			asked[filepath.Base(f.Value.String())] = true
		}
	}
	var stray []string
	for _, name := range after {
		if !slices.Contains(before, name) && !asked[name] && !strings.HasSuffix(name, ".test") {
			stray = append(stray, name)
		}
	}
	return stray, nil
}

// checkCleanDir runs the tests and turns a stray file left in the package
// directory into a failure.
func checkCleanDir(m *testing.M) int {
	before, err := dirEntries()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	stray, err := strayFiles(before)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if len(stray) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the tests left %s in the package directory; write under t.TempDir()\n", strings.Join(stray, ", "))
		return 1
	}
	return code
}
