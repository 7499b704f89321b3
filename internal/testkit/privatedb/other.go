//go:build !linux

package privatedb

import (
	"os/exec"
)

// Server is a private database server: Linux only.
type Server struct{}

// DSN is a DSN of the server's test database.
func (s *Server) DSN() string { return "" }

// Stop shuts the server down.
func (s *Server) Stop(Shutdown) error { return nil }

// Restart restarts the server.
func (s *Server) Restart(Shutdown) error { return nil }

// Postgres skips t: the private servers run on Linux only.
func Postgres(t TB, opts Options) *Server {
	t.Helper()
	skip(t, "the private servers run on Linux only")
	return nil
}

// MariaDB skips t: the private servers run on Linux only.
func MariaDB(t TB, opts Options) *Server {
	t.Helper()
	skip(t, "the private servers run on Linux only")
	return nil
}

// Namespace is a network namespace: Linux only.
type Namespace struct{ HostAddr, Addr string }

// NewNamespace skips t: network namespaces are Linux's.
func NewNamespace(t TB) *Namespace {
	t.Helper()
	skip(t, "network namespaces are Linux's")
	return nil
}

// Command returns a command that runs name with args.
func (n *Namespace) Command(name string, args ...string) *exec.Cmd {
	return exec.Command(name, args...)
}

// Cut does nothing.
func (n *Namespace) Cut() error { return nil }

// Reach does nothing.
func (n *Namespace) Reach(addr string) error { return nil }

// Heal does nothing.
func (n *Namespace) Heal() error { return nil }

// Standby skips t: the private servers run on Linux only.
func (s *Server) Standby(t TB, opts StandbyOptions) *Server {
	t.Helper()
	skip(t, "the private servers run on Linux only")
	return nil
}

// Detach does nothing.
func (s *Server) Detach(primary *Server) error { return nil }

// Promote does nothing.
func (s *Server) Promote() error { return nil }

// FailoverDSN is empty: the private servers run on Linux only.
func FailoverDSN(servers ...*Server) string { return "" }
