//go:build linux

package privatedb

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// standbyName is the application_name by which the primary knows its
// standby, in pg_stat_replication and synchronous_standby_names.
const standbyName = "plenum_standby"

// Standby starts a streaming-replication standby of the private
// PostgreSQL server s for t, made with PostgreSQL's own tools: a base
// backup of s (pg_basebackup -R, through a replication slot, so that s
// keeps every log segment the standby has yet to receive) into a data
// directory of its own, started as a hot standby on a free port of the
// same address. It returns once s lists the standby as streaming (and as
// synchronous, where opts says so). The standby is killed when t ends.
// A primary has one standby at most: its name and slot are fixed.
func (s *Server) Standby(t TB, opts StandbyOptions) *Server {
	t.Helper()
	basebackup := need(t, pgBin+"/pg_basebackup")
	dir := ownedDir(t, "plenum-pg-standby-", s.cred)
	conn := fmt.Sprintf("host=%s port=%d user=postgres application_name=%s", s.addr, s.port, standbyName)
	runAs(t, s.cred, basebackup, "-d", conn, "-D", dir+"/data", "-R", "-X", "stream",
		"-C", "-S", standbyName, "-c", "fast", "--no-sync")
	standby := pgServer(t, s.cred, dir, s.addr)
	standby.launch(t)
	ctx, cancel := context.WithTimeout(context.Background(), startWait)
	defer cancel()
	if opts.Synchronous {
		if err := s.exec(ctx, `ALTER SYSTEM SET synchronous_standby_names = '"`+standbyName+`"'`, "SELECT pg_reload_conf()"); err != nil {
			t.Fatal(err)
		}
	}
	want := "async"
	if opts.Synchronous {
		want = "sync"
	}
	if err := s.awaitReplication(ctx, func(state, sync string) bool { return state == "streaming" && sync == want }); err != nil {
		t.Fatalf("privatedb: the standby does not stream (%s): %v", want, err)
	}
	return standby
}

// Detach stops the standby s from receiving its primary's log (its
// primary_conninfo emptied, its configuration reloaded) and returns once
// primary no longer lists it: a standby fallen behind. An asynchronous
// standby misses every commit after it; a synchronous one's primary
// holds every commit after it, unacknowledged.
func (s *Server) Detach(primary *Server) error {
	ctx, cancel := context.WithTimeout(context.Background(), startWait)
	defer cancel()
	if err := s.exec(ctx, "ALTER SYSTEM SET primary_conninfo = ''", "SELECT pg_reload_conf()"); err != nil {
		return err
	}
	return primary.awaitReplication(ctx, nil)
}

// Promote makes the standby s a primary (pg_ctl promote, waiting for its
// end) and returns once it accepts writes.
func (s *Server) Promote() error {
	s.mu.Lock()
	running := s.cmd != nil
	s.mu.Unlock()
	if !running {
		return fmt.Errorf("privatedb: promote: the %s standby is not running", s.name)
	}
	out, err := asUser(s.cred, pgBin+"/pg_ctl", "promote", "-w", "-t", strconv.Itoa(int(startWait/time.Second)), "-D", s.dir+"/data").CombinedOutput()
	if err != nil {
		return fmt.Errorf("privatedb: pg_ctl promote: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startWait)
	defer cancel()
	return s.poll(ctx, func(db *sql.DB) (bool, error) {
		var recovering bool
		err := db.QueryRowContext(ctx, "SELECT pg_is_in_recovery()").Scan(&recovering)
		return err == nil && !recovering, nil
	})
}

// FailoverDSN is a DSN that names every server given, in order, and
// connects to the first that accepts writes (libpq's multi-host form
// with target_session_attrs=read-write, which pgx reads too): a client's
// DSN that follows a failover from a primary to its promoted standby.
func FailoverDSN(servers ...*Server) string {
	hosts := make([]string, len(servers))
	for i, s := range servers {
		hosts[i] = s.hostPort()
	}
	q := url.Values{"sslmode": {"disable"}, "target_session_attrs": {"read-write"}}
	return "postgres://postgres@" + strings.Join(hosts, ",") + "/postgres?" + q.Encode()
}

// awaitReplication waits until s lists its standby in
// pg_stat_replication with a state and sync_state that ok accepts, or,
// where ok is nil, no longer lists it.
func (s *Server) awaitReplication(ctx context.Context, ok func(state, sync string) bool) error {
	return s.poll(ctx, func(db *sql.DB) (bool, error) {
		var state, sync string
		err := db.QueryRowContext(ctx, "SELECT state, sync_state FROM pg_stat_replication WHERE application_name = $1", standbyName).Scan(&state, &sync)
		switch {
		case err == sql.ErrNoRows:
			return ok == nil, nil
		case err != nil:
			return false, err
		}
		return ok != nil && ok(state, sync), nil
	})
}

// exec runs statements on s, each on its own.
func (s *Server) exec(ctx context.Context, stmts ...string) error {
	db, err := sql.Open(s.driver, s.dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, stmt := range stmts {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("privatedb: %s: %w", stmt, err)
		}
	}
	return nil
}

// poll asks done on a connection to s every 50 ms until it reports true,
// returns an error, or ctx ends.
func (s *Server) poll(ctx context.Context, done func(*sql.DB) (bool, error)) error {
	db, err := sql.Open(s.driver, s.dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	for {
		ok, err := done(db)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("privatedb: %s: %w", s.name, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
