package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The machine this runs on may be shared (other work on the server, other
// processes on the cores), and rates then swing with the load. What a
// client costs does not: the CPU time its database sessions and the
// client process itself spent on the drain. Where the server runs on this
// machine (its sessions' processes visible in /proc) the rounds print it
// per 1,000 jobs, which the load changes far less than the rates.

// Each side's sessions carry an application_name of their own, so that
// their server processes can be told apart.
const (
	riverAppName   = "river CLI" // what River's CLI sets
	plenumAppName  = "plenum bench"
	monitorAppName = "plenum bench monitor"
)

// withAppName returns dsn with application_name set to name, in either of
// PostgreSQL's DSN forms.
func withAppName(dsn, name string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		q.Set("application_name", name)
		// Spaces as %20: pgx does not read '+' as one.
		u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20")
		return u.String()
	}
	return dsn + " application_name='" + name + "'"
}

// cpuSample is the CPU time spent so far by one side's server processes,
// by pid, and by this process.
type cpuSample struct {
	server map[int]time.Duration
	client time.Duration
	ok     bool // the server's processes were readable
}

// sampleCPU reads the CPU time of the server processes of the sessions
// named app, and of this process.
func sampleCPU(ctx context.Context, monitor *sql.DB, app string) (cpuSample, error) {
	s := cpuSample{server: map[int]time.Duration{}, client: processCPU(), ok: true}
	rows, err := monitor.QueryContext(ctx, "SELECT pid FROM pg_stat_activity WHERE application_name = $1", app)
	if err != nil {
		return s, fmt.Errorf("server sessions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var pid int
		if err := rows.Scan(&pid); err != nil {
			return s, err
		}
		d, ok := pidCPU(pid)
		if !ok {
			s.ok = false
			continue
		}
		s.server[pid] = d
	}
	return s, rows.Err()
}

// cpuSpent is what a side spent between two samples: server processes
// that appeared in between count from zero (one that ended in between is
// missed, which the pools' idle settings make rare).
func cpuSpent(before, after cpuSample) (server, client time.Duration, ok bool) {
	for pid, d := range after.server {
		server += d - before.server[pid]
	}
	return server, after.client - before.client, before.ok && after.ok && len(after.server) > 0
}

// clockTick is the unit of /proc's CPU times: USER_HZ, 100 on Linux.
const clockTick = 10 * time.Millisecond

// pidCPU reads a process's user and system CPU time from /proc.
func pidCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// count fields from after its closing one.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * clockTick, true
}

// processCPU is this process's user and system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
