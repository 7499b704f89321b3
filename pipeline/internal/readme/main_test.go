package main

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/plenumdb/plenum/internal/testkit/readmetest"
)

// TestREADME_ShowsThisProgram keeps the README's pipeline program and
// this file the same, so that the README's program is the one that
// compiles and is run below.
func TestREADME_ShowsThisProgram(t *testing.T) {
	readmetest.SameProgram(t, "## A pipeline", 50)
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
