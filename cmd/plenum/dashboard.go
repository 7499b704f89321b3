package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/plenumdb/plenum/dashboard"
	"github.com/plenumdb/plenum/migrations"
)

const dashboardAbout = `
Serves Plenum's web dashboard for one database: queues (counts per state,
oldest available item, recent throughput), items with their payloads,
results and attempts, pipeline runs with their tree of steps and barriers,
owners with their heartbeats, and stuck fan-ins. Times are measured on the
database clock.

It listens on 127.0.0.1:8080 unless told otherwise and is read-only unless
--actions is given: then revive, cancel and signal buttons appear, each
confirmed on a page of its own and protected against cross-site requests.
This command has no login of its own, so --actions is refused on any
address but a loopback one; to serve actions to others, mount the handler
(package dashboard) in your own server behind your own authentication.

An SQLite file is named with --db; a server database with --dialect and
--dsn, as for inspect. SIGINT or SIGTERM stops the server gracefully.`

// dashboardOptions configure a dashboard run.
type dashboardOptions struct {
	Dialect  string
	DSN      string
	DB       string
	Prefix   string // table name prefix
	Listen   string
	BasePath string // URL path the dashboard is served under
	Actions  bool
}

func runDashboardCmd(ctx context.Context, e env, args []string) error {
	o := dashboardOptions{Prefix: migrations.DefaultPrefix, Listen: "127.0.0.1:8080"}
	fs := newFlags(e, "dashboard", "dashboard (--db FILE | --dialect NAME --dsn DSN) [flags]", dashboardAbout)
	fs.StringVar(&o.DB, "db", "", "SQLite database `file`")
	fs.StringVar(&o.Dialect, "dialect", "", "database dialect: "+strings.Join(openable(), ", ")+" (default sqlite)")
	fs.StringVar(&o.DSN, "dsn", "", "database to show (for sqlite, a file path: the same as --db)")
	fs.StringVar(&o.Prefix, "prefix", o.Prefix, "table name prefix")
	fs.StringVar(&o.Listen, "listen", o.Listen, "`address` to listen on (host:port)")
	fs.StringVar(&o.BasePath, "base-path", "", "URL `path` to serve the dashboard under, e.g. /plenum (default the root)")
	fs.BoolVar(&o.Actions, "actions", false, "enable revive, cancel and signal (loopback addresses only)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	return runDashboard(ctx, e.stdout, o)
}

// runDashboard serves the dashboard until ctx ends, then shuts the server
// down gracefully.
func runDashboard(ctx context.Context, w io.Writer, o dashboardOptions) error {
	if err := checkPrefix(o.Prefix); err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return usagef("--listen %q: want host:port, e.g. 127.0.0.1:8080", o.Listen)
	}
	if o.Actions && !loopback(host) {
		return usagef("--actions on %s: refused, this command has no authentication; listen on 127.0.0.1 (or ::1), or mount package dashboard behind your own authentication", o.Listen)
	}
	src := inspectOptions{Dialect: o.Dialect, DSN: o.DSN, DB: o.DB, Prefix: o.Prefix}
	db, _, where, _, st, err := src.openStore(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	h, err := dashboard.New(st, dashboard.Options{
		Prefix:  o.BasePath,
		Actions: o.Actions,
		// Refused above unless the listener is loopback.
		AllowUnauthenticatedActions: o.Actions,
	})
	if err != nil {
		return usagef("--base-path: %v", err)
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	mode := "read-only"
	if o.Actions {
		mode = "actions enabled"
	}
	fmt.Fprintf(w, "plenum dashboard (%s, %s) at http://%s%s/\n", where, mode, ln.Addr(), o.BasePath)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return fmt.Errorf("dashboard: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		return fmt.Errorf("dashboard: shutdown: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("dashboard: %w", err)
	}
	fmt.Fprintln(w, "plenum dashboard: stopped")
	return nil
}

// loopback reports whether host names only this machine: a loopback IP, or
// "localhost". An empty host (":8080") listens on every interface.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
