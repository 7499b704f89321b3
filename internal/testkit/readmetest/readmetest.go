// Package readmetest keeps a README's program and the file that compiles
// it the same: the README shows the program a test runs, not a copy that
// drifts.
package readmetest

import (
	"os"
	"strings"
	"testing"
)

// SameProgram fails t unless the first Go block under heading in the
// repository's README.md is the text of main.go in the test's directory
// (three levels below the root), and main.go has fewer than maxLines lines.
func SameProgram(t *testing.T, heading string, maxLines int) {
	t.Helper()
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(src), "\n"); n >= maxLines {
		t.Errorf("the program has %d lines, want under %d", n, maxLines)
	}
	_, section, ok := strings.Cut(string(readme), heading+"\n")
	if !ok {
		t.Fatalf("README has no %q section", heading)
	}
	_, block, ok := strings.Cut(section, "```go\n")
	if !ok {
		t.Fatalf("README's %q has no Go block", heading)
	}
	block, _, _ = strings.Cut(block, "```")
	if block != string(src) {
		t.Errorf("README's %q program differs from main.go:\n%s", heading, block)
	}
}
