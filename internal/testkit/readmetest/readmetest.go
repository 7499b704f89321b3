// Package readmetest keeps a page's program and the file that compiles
// it the same: the README and docs/ show the programs tests run, not
// copies that drift.
package readmetest

import (
	"os"
	"strings"
	"testing"
	"unicode/utf8"
)

// SameProgram fails t unless the first Go block under heading in the
// repository's README.md is the text of main.go in the test's directory
// (three levels below the root), and main.go has fewer than maxLines lines.
func SameProgram(t *testing.T, heading string, maxLines int) {
	t.Helper()
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(src), "\n"); n >= maxLines {
		t.Errorf("the program has %d lines, want under %d", n, maxLines)
	}
	SameFile(t, "../../../README.md", heading, "main.go")
}

// SameFile fails t unless the first Go block under heading (the whole
// heading line, "## A worker") in page is the text of file, both paths
// from the test's directory.
func SameFile(t *testing.T, page, heading, file string) {
	t.Helper()
	text, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(text), heading+"\n")
	if !ok {
		t.Fatalf("%s has no %q section", page, heading)
	}
	_, block, ok := strings.Cut(section, "```go\n")
	if !ok {
		t.Fatalf("%s's %q has no Go block", page, heading)
	}
	block, _, _ = strings.Cut(block, "```")
	if block != string(src) {
		t.Errorf("%s's %q program differs from %s:\n%s", page, heading, file, block)
	}
}

// TabWidth is the columns a tab counts for in Fits: the width most
// editors show Go's indentation with.
const TabWidth = 4

// Fits fails t unless file has at most maxLines lines, none of them wider
// than maxColumns columns (a tab counted as TabWidth).
func Fits(t *testing.T, file string, maxLines, maxColumns int) {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(src), "\n"), "\n")
	if len(lines) > maxLines {
		t.Errorf("%s has %d lines, want at most %d", file, len(lines), maxLines)
	}
	for i, line := range lines {
		width := utf8.RuneCountInString(line) + strings.Count(line, "\t")*(TabWidth-1)
		if width > maxColumns {
			t.Errorf("%s:%d is %d columns wide, want at most %d", file, i+1, width, maxColumns)
		}
	}
}
