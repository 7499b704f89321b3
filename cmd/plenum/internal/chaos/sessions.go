package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// Dropping connections: the harness ends some of a worker's database
// sessions from its own connection, as a failing network or a server
// restart would. It ends only sessions it can prove are that worker's:
// those whose client port is a TCP socket the worker process holds open
// (read from /proc), and on PostgreSQL also marked with the round's
// application_name.

// sessionKiller ends database sessions by client port.
type sessionKiller interface {
	// kill ends at most n of the sessions whose client port is in ports,
	// and returns how many it ended.
	kill(ctx context.Context, db *sql.DB, ports map[int]bool, n int) (int, error)
}

// killerFor returns the session killer of a dialect, or nil when the
// harness cannot end its sessions (SQLite has none).
func killerFor(dialectName, mark string) sessionKiller {
	switch dialectName {
	case "postgres":
		return pgKiller{mark: mark}
	case "mysql":
		return mysqlKiller{}
	}
	return nil
}

// markDSN returns dsn with the session mark where the dialect has one.
func markDSN(dialectName, dsn, mark string) string {
	if dialectName != "postgres" {
		return dsn
	}
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		q.Set("application_name", mark)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " application_name=" + mark
}

type pgKiller struct{ mark string }

func (k pgKiller) kill(ctx context.Context, db *sql.DB, ports map[int]bool, n int) (int, error) {
	rows, err := db.QueryContext(ctx, "SELECT pid, client_port FROM pg_stat_activity WHERE application_name = $1 AND client_port IS NOT NULL", k.mark)
	if err != nil {
		return 0, err
	}
	var pids []int64
	for rows.Next() {
		var pid int64
		var port int
		if err := rows.Scan(&pid, &port); err != nil {
			rows.Close()
			return 0, err
		}
		if ports[port] {
			pids = append(pids, pid)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	killed := 0
	for _, pid := range pids[:min(n, len(pids))] {
		var ok bool
		if err := db.QueryRowContext(ctx, "SELECT pg_terminate_backend($1)", pid).Scan(&ok); err != nil {
			return killed, err
		}
		if ok {
			killed++
		}
	}
	return killed, nil
}

type mysqlKiller struct{}

func (mysqlKiller) kill(ctx context.Context, db *sql.DB, ports map[int]bool, n int) (int, error) {
	rows, err := db.QueryContext(ctx, "SELECT ID, HOST FROM information_schema.PROCESSLIST")
	if err != nil {
		return 0, err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		var host sql.NullString
		if err := rows.Scan(&id, &host); err != nil {
			rows.Close()
			return 0, err
		}
		i := strings.LastIndexByte(host.String, ':')
		if i < 0 {
			continue
		}
		if port, err := strconv.Atoi(host.String[i+1:]); err == nil && ports[port] {
			ids = append(ids, id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	killed := 0
	for _, id := range ids[:min(n, len(ids))] {
		// The session may have ended meanwhile (1094: unknown thread).
		if _, err := db.ExecContext(ctx, "KILL CONNECTION "+strconv.FormatInt(id, 10)); err == nil {
			killed++
		}
	}
	return killed, nil
}

// socketPorts returns the local ports of the TCP sockets process pid has
// open.
func socketPorts(pid int) (map[int]bool, error) {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	fds, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		link, err := os.Readlink(dir + "/" + fd.Name())
		if err == nil && strings.HasPrefix(link, "socket:[") && strings.HasSuffix(link, "]") {
			inodes[link[len("socket:["):len(link)-1]] = true
		}
	}
	ports := map[int]bool{}
	for _, table := range []string{"tcp", "tcp6"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || !inodes[f[9]] {
				continue
			}
			i := strings.LastIndexByte(f[1], ':')
			if port, err := strconv.ParseInt(f[1][i+1:], 16, 32); err == nil {
				ports[int(port)] = true
			}
		}
	}
	return ports, nil
}
