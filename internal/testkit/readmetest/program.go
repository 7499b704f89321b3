package readmetest

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// asMain is set in the environment of a test binary started by
// StartProgram: RunMain makes that process its package's program.
const asMain = "PLENUM_READMETEST_RUN_MAIN"

// RunMain runs main instead of the tests, and exits with status 0 when
// main returns, in a test binary that StartProgram started; elsewhere it
// does nothing. Call it first in the package's TestMain, so that the
// program a test runs is the package's own main, built with the test's
// flags (-race included), not a copy.
func RunMain(main func()) {
	if os.Getenv(asMain) == "1" {
		main()
		os.Exit(0)
	}
}

// Program is a program's process, its stdout read line by line.
type Program struct {
	cmd    *exec.Cmd
	lines  chan string // closed when stdout ends
	stderr strings.Builder
	mu     sync.Mutex // guards stderr
	once   sync.Once
	exit   error
}

// StartProgram starts the test binary again as its package's program
// (see RunMain), with args as the program's arguments. The process is
// killed when t ends, if it has not exited by then.
func StartProgram(t *testing.T, args ...string) *Program {
	t.Helper()
	return StartProgramIn(t, "", args...)
}

// StartProgramIn is StartProgram with the program's working directory
// dir ("" for the test's), where the files it names by relative path go.
func StartProgramIn(t *testing.T, dir string, args ...string) *Program {
	t.Helper()
	self, err := os.Executable() // absolute, whatever dir is
	if err != nil {
		t.Fatal(err)
	}
	p := &Program{cmd: exec.Command(self, args...), lines: make(chan string, 1024)}
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), asMain+"=1")
	p.cmd.Stderr = writerFunc(func(b []byte) (int, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.stderr.Write(b)
	})
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Error(err)
		}
		p.wait()
	})
	return p
}

// Await reads the program's stdout up to the first line that ready
// accepts, and fails t if the program's stdout ends before, or if no such
// line comes within the time given; what says what the line was to show.
func (p *Program) Await(t *testing.T, within time.Duration, what string, ready func(line string) bool) {
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				t.Fatalf("the program ended before it showed %s: %v\n%s", what, p.wait(), p.errors())
			}
			if ready(line) {
				return
			}
		case <-timeout:
			t.Fatalf("the program did not show %s within %v\n%s", what, within, p.errors())
		}
	}
}

// Signal sends sig to the program.
func (p *Program) Signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// Exit waits for the program to end, within the time given, and returns
// the lines of stdout that Await did not read and how it exited (nil for
// status 0, an *exec.ExitError otherwise).
func (p *Program) Exit(t *testing.T, within time.Duration) (rest []string, exit error) {
	t.Helper()
	timeout := time.After(within)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				return rest, p.wait()
			}
			rest = append(rest, line)
		case <-timeout:
			t.Fatalf("the program did not end within %v; it printed %q\n%s", within, rest, p.errors())
		}
	}
}

// wait waits once for the process and returns how it exited.
func (p *Program) wait() error {
	p.once.Do(func() { p.exit = p.cmd.Wait() })
	return p.exit
}

// errors is what the program wrote to stderr so far, for a failure's message.
func (p *Program) errors() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return "stderr:\n" + p.stderr.String()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }
