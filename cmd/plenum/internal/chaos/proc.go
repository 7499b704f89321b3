package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is one running worker process.
type proc struct {
	slot int
	cmd  *exec.Cmd

	mu        sync.Mutex
	stopped   bool // paused by SIGSTOP
	byHarness bool // SIGKILLed by the harness
	exited    bool
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) signal(s syscall.Signal) bool {
	return !p.exited && p.cmd.Process.Signal(s) == nil
}

// kill sends SIGKILL, and reports whether it was sent.
func (p *proc) kill() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.signal(syscall.SIGKILL) {
		return false
	}
	p.byHarness = true
	return true
}

// stop pauses the process.
func (p *proc) stop() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped || !p.signal(syscall.SIGSTOP) {
		return false
	}
	p.stopped = true
	return true
}

// cont resumes a paused process.
func (p *proc) cont() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		p.signal(syscall.SIGCONT)
		p.stopped = false
	}
}

func (p *proc) isStopped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopped
}

// term asks the process to stop gracefully, resuming it first.
func (p *proc) term() {
	p.cont()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.signal(syscall.SIGTERM)
}

// stopGrace bounds a worker's graceful stop before it is killed.
const stopGrace = 45 * time.Second

// supervise keeps a worker process of spec running in its slot until ctx
// ends, starting a new one whenever one dies, then stops it gracefully.
func (r *round) supervise(ctx context.Context, spec WorkerSpec) {
	// The workers die with the harness (Pdeathsig), which the kernel ties
	// to the thread that started them: keep this goroutine on one thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	js, err := json.Marshal(spec)
	if err != nil {
		r.logf("worker %d: %v", spec.Slot, err)
		return
	}
	for ctx.Err() == nil {
		cmd := r.pv.command(spec.Slot, r.cfg.Command())
		cmd.Env = append(cmd.Environ(), WorkerEnv+"="+string(js))
		cmd.Stdout = &lines{fn: func(line string) {
			if r.acks.add(line) {
				return
			}
			if strings.HasPrefix(line, "lost ") {
				r.count(func(res *Result) { res.OwnersLost++ })
			}
			var point string
			var n int
			if _, err := fmt.Sscanf(line, "fired %s %d", &point, &n); err == nil {
				r.count(func(res *Result) { res.Fired[point] += n })
			}
		}}
		tail := &tailBuffer{max: 4096}
		cmd.Stderr = tail
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			r.logf("worker %d: start: %v", spec.Slot, err)
			sleep(ctx, time.Second)
			continue
		}
		p := &proc{slot: spec.Slot, cmd: cmd}
		r.mu.Lock()
		r.procs[p] = true
		r.res.Processes++
		r.mu.Unlock()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var werr error
		select {
		case werr = <-done:
		case <-ctx.Done():
			p.term()
			t := time.NewTimer(stopGrace)
			select {
			case werr = <-done:
			case <-t.C:
				r.logf("worker %d did not stop within %v: killed", spec.Slot, stopGrace)
				p.kill()
				werr = <-done
			}
			t.Stop()
		}
		p.mu.Lock()
		p.exited = true
		byHarness := p.byHarness
		p.mu.Unlock()
		r.mu.Lock()
		delete(r.procs, p)
		r.mu.Unlock()
		var ee *exec.ExitError
		switch {
		case byHarness:
		case errors.As(werr, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL:
			at := killedAt(tail.String())
			r.count(func(res *Result) { res.PointKills++; res.Fired[at]++ })
		case ctx.Err() != nil && (werr == nil || errors.As(werr, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGTERM):
			// Stopped, or asked to stop before it could catch the
			// signal (a worker of a drain that had nothing to do).
			return
		default:
			r.count(func(res *Result) { res.Exits++ })
			r.logf("worker %d ended (%v): %s", spec.Slot, werr, strings.TrimSpace(tail.String()))
		}
		sleep(ctx, 200*time.Millisecond)
	}
}

// lines calls fn with each line written to it.
type lines struct {
	fn  func(string)
	buf []byte
}

func (l *lines) Write(b []byte) (int, error) {
	l.buf = append(l.buf, b...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		l.fn(string(l.buf[:i]))
		l.buf = l.buf[i+1:]
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(b []byte) (int, error) {
	t.buf = append(t.buf, b...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(b), nil
}

func (t *tailBuffer) String() string { return string(t.buf) }
