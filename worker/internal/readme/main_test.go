package main

import (
	"context"
	"encoding/json"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/readmetest"
	"github.com/plenumdb/plenum/sqlite"
)

// TestREADME_ShowsThisProgram keeps the README's "Use it" program and this
// file the same, so that the README's program is the one that compiles and
// is run below.
func TestREADME_ShowsThisProgram(t *testing.T) {
	// 43: the 40 of a program that stopped only on Ctrl-C and enqueued raw
	// JSON, the import of syscall for SIGTERM, and the typed kind's two.
	readmetest.SameProgram(t, "## A worker", 43)
}

// TestProgram_WelcomesThenStopsOnInterruptOrTerminate runs the program:
// it completes the item it enqueued, and stops cleanly on Ctrl-C
// (SIGINT) and on SIGTERM, which is what a container's stop, systemd and
// Kubernetes send.
func TestProgram_WelcomesThenStopsOnInterruptOrTerminate(t *testing.T) {
	// Signals are the process's: the runs go one after another. The test
	// hears them too, so that one the program ignores fails the test
	// instead of ending its process.
	heard := make(chan os.Signal, 4)
	signal.Notify(heard, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(heard)
	for name, sig := range map[string]syscall.Signal{"SIGINT": syscall.SIGINT, "SIGTERM": syscall.SIGTERM} {
		t.Run(name, func(t *testing.T) { runProgramUntil(t, sig) })
	}
}

// runProgramUntil runs main in a directory of its own, waits for the
// welcome item to complete, sends sig to the process, and checks that
// main returned after stopping the worker.
func runProgramUntil(t *testing.T, sig syscall.Signal) {
	t.Chdir(t.TempDir())
	done := make(chan struct{})
	go func() { defer close(done); main() }()

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var store *core.Store
	for store == nil {
		if _, err := os.Stat("jobs.db"); err == nil {
			db, err := sqlite.Open("jobs.db")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if s, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{}); err == nil {
				store = s
				break
			}
			db.Close()
		}
		if ctx.Err() != nil {
			t.Fatal("the program made no usable jobs.db")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for {
		n, err := store.Counts(ctx, "email")
		if err == nil && n[core.StateCompleted] == 1 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the welcome item never completed: %v, %v", n, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(os.Getpid(), sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatalf("the program did not stop on signal %d (%s)", sig, sig)
	}
	var got string
	if err := store.DB().QueryRowContext(ctx, "SELECT result FROM plenum_items WHERE queue = 'email'").Scan(&got); err != nil {
		t.Fatal(err)
	}
	var msg string
	if err := json.Unmarshal([]byte(got), &msg); err != nil || msg != "welcome, ada" {
		t.Errorf("result %q, want \"welcome, ada\"", got)
	}
	if n, err := store.DB().QueryContext(ctx, "SELECT 1 FROM plenum_processes"); err == nil {
		if n.Next() {
			t.Error("the program left its owner registered: it did not stop cleanly")
		}
		n.Close()
	}
}
