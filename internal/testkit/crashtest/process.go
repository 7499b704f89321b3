package crashtest

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// Process is the test binary run again as the process a test kills: it
// runs one top-level test only, the test's environment tells it to play
// the process, and it reports its progress in lines on stdout.
type Process struct {
	cmd *exec.Cmd
	// lines are its stdout's, until it ends (closed then) or is killed.
	lines  chan string
	killed chan struct{}
	once   sync.Once
}

// Start runs the test binary again with -test.run naming test, a
// top-level test, and env (KEY=value) added to this process's
// environment. Its stderr is this process's; Await reads its stdout. The
// process is killed when t ends, if it was not before.
func Start(t testing.TB, test string, env ...string) *Process {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &Process{cmd: cmd, lines: make(chan string), killed: make(chan struct{})}
	go p.read(out)
	t.Cleanup(func() { _ = p.kill() })
	return p
}

func (p *Process) read(out io.Reader) {
	defer close(p.lines)
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		select {
		case p.lines <- sc.Text():
		case <-p.killed:
			return
		}
	}
}

// Await reads the process's stdout up to the first line that ready
// accepts, and returns it. If the process ends before, or no such line
// comes within the time given, Await kills it and fails t, saying what
// the line was to report.
func (p *Process) Await(t testing.TB, within time.Duration, what string, ready func(line string) bool) string {
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				_ = p.kill()
				t.Fatalf("the worker process ended before it reported %s", what)
			}
			if ready(line) {
				return line
			}
		case <-timeout:
			_ = p.kill()
			t.Fatalf("the worker process did not report %s within %v", what, within)
		}
	}
}

// Kill kills the process (with SIGKILL on Unix) and waits for its end.
func (p *Process) Kill(t testing.TB) {
	t.Helper()
	if err := p.kill(); err != nil {
		t.Fatal(err)
	}
}

// kill kills the process once and waits for it; killing one that has
// exited already is no error.
func (p *Process) kill() (err error) {
	p.once.Do(func() {
		close(p.killed)
		if err = p.cmd.Process.Kill(); errors.Is(err, os.ErrProcessDone) {
			err = nil
		}
		_ = p.cmd.Wait()
	})
	return err
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }
