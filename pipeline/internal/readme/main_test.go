package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
)

// TestREADME_ShowsThisProgram keeps the README's pipeline program and
// this file the same, so that the README's program is the one that
// compiles and is run below.
func TestREADME_ShowsThisProgram(t *testing.T) {
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(src), "\n"); n >= 50 {
		t.Errorf("the program has %d lines, want under 50", n)
	}
	_, section, ok := strings.Cut(string(readme), "### Pipelines\n")
	if !ok {
		t.Fatal(`README has no "### Pipelines" section`)
	}
	_, block, ok := strings.Cut(section, "```go\n")
	if !ok {
		t.Fatal(`README's "Pipelines" has no Go block`)
	}
	block, _, _ = strings.Cut(block, "```")
	if block != string(src) {
		t.Errorf("README's \"Pipelines\" program differs from pipeline/internal/readme/main.go:\n%s", block)
	}
}

// TestProgram_RunsThePipeline runs the program: it prints the run's
// state and output.
func TestProgram_RunsThePipeline(t *testing.T) {
	t.Chdir(t.TempDir())
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	main()
	os.Stdout = stdout
	w.Close()
	var out bytes.Buffer
	if _, err := io.Copy(&out, r); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "completed \"DURABLE PIPELINES IN PLAIN GO!\"\n"; got != want {
		t.Errorf("the program printed %q, want %q", got, want)
	}
}
