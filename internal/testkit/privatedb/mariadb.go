//go:build linux

package privatedb

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"strconv"
	"syscall"
	"time"

	_ "github.com/go-sql-driver/mysql" // the "mysql" driver, for readiness
)

// MariaDB starts a private MariaDB server for t: mariadb-install-db into a
// fresh data directory, the grant tables skipped (any user, any address,
// no password), listening on opts.Addr at a free port, with a database
// test, which its DSN names. It is killed when t ends.
func MariaDB(t TB, opts Options) *Server {
	t.Helper()
	cred := systemUser(t, "mysql")
	install := need(t, "/usr/bin/mariadb-install-db")
	server := need(t, "/usr/sbin/mariadbd")
	dir := ownedDir(t, "plenum-mariadb-", cred)
	data := dir + "/data"
	runAs(t, cred, install, "--no-defaults", "--datadir="+data, "--user=mysql", "--skip-test-db", "--auth-root-authentication-method=normal")
	s := &Server{t: t, name: "MariaDB", dir: dir, addr: opts.addr(), driver: "mysql", cred: cred}
	s.port = freePort(t, s.addr)
	hostPort := net.JoinHostPort(s.addr, strconv.Itoa(s.port))
	s.dsn = fmt.Sprintf("root@tcp(%s)/mysql", hostPort)
	// A tmpdir of its own: a starting server deletes every #sql file in
	// its tmpdir, and in the default, /tmp, those are the internal
	// temporary tables of the machine's shared server, which then crashes
	// dropping one of them (signal 11 in ha_maria::drop_table).
	s.argv = func() []string {
		return []string{server, "--no-defaults", "--datadir=" + data, "--socket=" + dir + "/mysqld.sock",
			"--pid-file=" + dir + "/mysqld.pid", "--tmpdir=" + dir, "--port=" + strconv.Itoa(s.port), "--bind-address=" + s.addr,
			"--user=mysql", "--skip-grant-tables", "--skip-log-bin", "--innodb-buffer-pool-size=32M",
			"--innodb-log-file-size=16M", "--innodb-flush-log-at-trx-commit=2", "--max-connections=200"}
	}
	s.signal = func(m Shutdown) syscall.Signal {
		if m == Immediate {
			return syscall.SIGKILL
		}
		return syscall.SIGTERM
	}
	s.launch(t)
	db, err := sql.Open("mysql", s.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS test"); err != nil {
		t.Fatalf("privatedb: create MariaDB's test database: %v", err)
	}
	s.dsn = fmt.Sprintf("root@tcp(%s)/test", hostPort)
	return s
}
