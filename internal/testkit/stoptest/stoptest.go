// Package stoptest bounds the waits of tests that stop a runtime: a test
// whose worker does not stop fails, with every goroutine's stack, instead
// of hanging its package until go test's -timeout, whose panic names the
// test but not what it waited on.
package stoptest

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"testing"
	"time"
)

// Wait is how long Stop waits past the grace it gives the handlers:
// generous, as the machine may be loaded; a few statements remain once
// the handlers have returned.
const Wait = time.Minute

// Stop calls stop with a context that ends after grace, the time a
// worker's Stop gives its handlers, and returns its error. If stop has
// not returned Wait after the grace, it fails t through Stuck.
func Stop(t testing.TB, stop func(context.Context) error, grace time.Duration) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- stop(ctx) }()
	select {
	case err := <-stopped:
		return err
	case <-time.After(grace + Wait):
		Stuck(t, "Stop has not returned %v after the %v it gave the handlers", Wait, grace)
		return nil
	}
}

// Await waits for done to close or receive, and fails t through Stuck if
// it has not within the given time; what names what was awaited.
func Await(t testing.TB, done <-chan struct{}, within time.Duration, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(within):
		Stuck(t, "no %s within %v", what, within)
	}
}

// Stuck fails t for a wait that did not end, after printing every
// goroutine's stack to stderr: what the goroutines wait on is what a lost
// wake-up or a deadlock leaves to see.
func Stuck(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(os.Stderr, "%s: stuck: %s; every goroutine:\n", t.Name(), msg)
	_ = pprof.Lookup("goroutine").WriteTo(os.Stderr, 2)
	t.Fatal(msg)
}
