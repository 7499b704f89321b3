//go:build linux

package privatedb

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for readiness
)

// pgBin is where Debian puts PostgreSQL 15's server programs.
const pgBin = "/usr/lib/postgresql/15/bin"

// Postgres starts a private PostgreSQL 15 cluster for t: initdb into a
// fresh data directory, trust authentication from any address, listening
// on opts.Addr at a free port. Its DSN names the database postgres as the
// superuser postgres. It is killed when t ends.
func Postgres(t TB, opts Options) *Server {
	t.Helper()
	cred := systemUser(t, "postgres")
	initdb := need(t, pgBin+"/initdb")
	dir := ownedDir(t, "plenum-pg-", cred)
	data := dir + "/data"
	runAs(t, cred, initdb, "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C")
	hba, err := os.OpenFile(data+"/pg_hba.conf", os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The clients of a partition test connect from another network
	// namespace, at an address of their own; a standby of a server
	// listening there replicates from that address.
	_, err = hba.WriteString("host all all 0.0.0.0/0 trust\nhost replication all 0.0.0.0/0 trust\n")
	hba.Close()
	if err != nil {
		t.Fatal(err)
	}
	s := pgServer(t, cred, dir, opts.addr())
	s.launch(t)
	return s
}

// pgServer is a PostgreSQL server on the data directory dir/data, not
// started yet: a cluster's or a standby's.
func pgServer(t TB, cred *syscall.Credential, dir, addr string) *Server {
	t.Helper()
	server := need(t, pgBin+"/postgres")
	data := dir + "/data"
	s := &Server{t: t, name: "PostgreSQL", dir: dir, addr: addr, driver: "pgx", cred: cred}
	s.port = freePort(t, s.addr)
	s.dsn = fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", s.hostPort())
	s.argv = func() []string {
		return []string{server, "-D", data, "-p", strconv.Itoa(s.port), "-k", dir,
			"-c", "listen_addresses=" + s.addr,
			// Speed over durability against a crash of the machine, which
			// the tests do not cause; never against a crash of the server
			// (synchronous_commit stays on: an immediate shutdown would
			// lose commits already acknowledged).
			"-c", "fsync=off", "-c", "full_page_writes=off",
			"-c", "shared_buffers=32MB", "-c", "max_connections=100"}
	}
	s.signal = func(m Shutdown) syscall.Signal {
		if m == Immediate {
			return syscall.SIGQUIT
		}
		return syscall.SIGINT
	}
	return s
}

// hostPort is the server's address and port, as a DSN names them.
func (s *Server) hostPort() string {
	return net.JoinHostPort(s.addr, strconv.Itoa(s.port))
}
