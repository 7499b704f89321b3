package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
)

// TestMain makes the test binary a chaos worker when the harness starts
// it as one.
func TestMain(m *testing.M) {
	spec, ok, err := WorkerFromEnv()
	if !ok {
		os.Exit(m.Run())
	}
	if err == nil {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		err = RunWorker(ctx, spec, os.Stdout)
		stop()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// selfCommand starts this test binary again, as a worker.
func selfCommand() *exec.Cmd { return exec.Command(os.Args[0], "-test.run=^$") }
