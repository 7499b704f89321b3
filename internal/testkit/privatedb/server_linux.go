//go:build linux

package privatedb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Server is a private database server.
type Server struct {
	t      TB
	name   string // "postgres" or "mariadb", for messages
	dir    string // its data directory and sockets
	addr   string
	port   int
	dsn    string
	driver string          // database/sql driver name, for readiness
	argv   func() []string // the server's command line
	signal func(Shutdown) syscall.Signal
	cred   *syscall.Credential

	mu  sync.Mutex
	cmd *exec.Cmd
	end chan struct{} // closed when cmd has exited
}

// DSN is a DSN of the server's test database, for the dialect's Open.
func (s *Server) DSN() string { return s.dsn }

// Addr is the address the server listens on; Port its TCP port.
func (s *Server) Addr() string { return s.addr }

// Port is the server's TCP port.
func (s *Server) Port() int { return s.port }

// systemUser returns the credential of the named system user, or skips t.
func systemUser(t TB, name string) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		skip(t, "the servers run as their own system users, which only root can start")
	}
	u, err := user.Lookup(name)
	if err != nil {
		skip(t, fmt.Sprintf("no system user %s: %v", name, err))
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

// need returns path if it is an executable file, or skips t.
func need(t TB, path string) string {
	t.Helper()
	if st, err := os.Stat(path); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		skip(t, "no "+path)
	}
	return path
}

// ownedDir makes a directory under the system's temporary directory
// (which every user may traverse, unlike t.TempDir's), owned by cred,
// removed when t ends.
func ownedDir(t TB, pattern string, cred *syscall.Credential) string {
	t.Helper()
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// freePort returns a TCP port that nothing listens on at addr now.
func freePort(t TB, addr string) int {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		t.Fatalf("privatedb: find a free port on %s: %v", addr, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// runAs runs a command as cred, to its end, failing t with its output.
func runAs(t TB, cred *syscall.Credential, name string, args ...string) {
	t.Helper()
	if out, err := asUser(cred, name, args...).CombinedOutput(); err != nil {
		t.Fatalf("privatedb: %s: %v\n%s", name, err, out)
	}
}

// asUser is a command that runs name with args as cred, in a process
// group of its own.
func asUser(cred *syscall.Credential, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true}
	cmd.Dir = "/"
	return cmd
}

// start starts the server and waits until it answers.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return fmt.Errorf("privatedb: %s runs already", s.name)
	}
	argv := s.argv()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred, Setpgid: true}
	cmd.Dir = s.dir
	log, err := os.OpenFile(s.dir+"/server.log", os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("privatedb: start %s: %w", s.name, err)
	}
	end := make(chan struct{})
	go func() { _ = cmd.Wait(); close(end) }()
	s.cmd, s.end = cmd, end
	return s.awaitReady(end)
}

// awaitReady pings the server until it answers, it exits, or startWait
// passes.
func (s *Server) awaitReady(end <-chan struct{}) error {
	db, err := sql.Open(s.driver, s.dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(startWait)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = db.PingContext(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-end:
			return fmt.Errorf("privatedb: %s exited at start (see %s/server.log): %w", s.name, s.dir, err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("privatedb: %s did not answer within %v: %w", s.name, startWait, err)
		}
	}
}

// Stop shuts the server down as mode says and waits for its end.
func (s *Server) Stop(mode Shutdown) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil
	}
	if err := s.cmd.Process.Signal(s.signal(mode)); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("privatedb: stop %s (%v): %w", s.name, mode, err)
	}
	select {
	case <-s.end:
	case <-time.After(startWait):
		s.killGroup()
		return fmt.Errorf("privatedb: %s did not stop (%v) within %v", s.name, mode, startWait)
	}
	s.killGroup() // a child the server left behind
	s.cmd, s.end = nil, nil
	return nil
}

// Restart stops the server as mode says and starts it again on the same
// data directory and port, returning once it answers.
func (s *Server) Restart(mode Shutdown) error {
	if err := s.Stop(mode); err != nil {
		return err
	}
	return s.start()
}

// Start starts a stopped server again.
func (s *Server) Start() error { return s.start() }

// killGroup kills the server's process group; s.mu is held.
func (s *Server) killGroup() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// launch starts s for t and registers its end with t.
func (s *Server) launch(t TB) {
	t.Helper()
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.killGroup()
		if s.end != nil {
			<-s.end
		}
		s.cmd, s.end = nil, nil
	})
	if err := s.start(); err != nil {
		if b, rerr := os.ReadFile(s.dir + "/server.log"); rerr == nil {
			t.Logf("%s's log:\n%s", s.name, b)
		}
		t.Fatal(err)
	}
	t.Logf("private %s on %s, data in %s", s.name, net.JoinHostPort(s.addr, strconv.Itoa(s.port)), s.dir)
	t.Logf("conformance: %s: testing the database of a private %s server", Require, s.name)
}
