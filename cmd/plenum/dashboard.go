package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/plenumdb/plenum/dashboard"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
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
This command has no login of its own, so it refuses any address but a
loopback one: --expose-without-auth serves the read-only pages there
anyway (every payload, to whoever reaches the address), and --actions
stays loopback only. To serve others, mount the handler (package
dashboard) in your own server behind your own authentication.

Every action posted, done or refused, is logged on standard error with
its target, its outcome and the remote address.

It answers only requests that name it as localhost, a loopback address,
the address it listens on, or a name given with --allow-host: a page on
another name that an attacker's DNS points at this machine gets nothing.

An SQLite file is named with --db; a server database with --dialect and
--dsn, as for inspect. SIGINT or SIGTERM stops the server gracefully.`

// dashboardOptions configure a dashboard run.
type dashboardOptions struct {
	// Database names the database and the tables' prefix, as inspect's.
	cmdline.Database
	Listen   string
	BasePath string // URL path the dashboard is served under
	Actions  bool
	// Expose serves the read-only pages on an address other machines
	// can reach, with no authentication.
	Expose bool
	// AllowHosts are the host names requests may name besides the
	// loopback ones (dashboard.Options.AllowedHosts).
	AllowHosts []string
}

func runDashboardCmd(ctx context.Context, e env, args []string) error {
	o := dashboardOptions{Listen: "127.0.0.1:8080"}
	fs := newFlags(e, "dashboard", "dashboard (--db FILE | [--dialect NAME] --dsn DSN) [flags]", dashboardAbout)
	o.Register(fs, "", "to show")
	o.RegisterPrefix(fs)
	fs.StringVar(&o.Listen, "listen", o.Listen, "`address` to listen on (host:port)")
	fs.StringVar(&o.BasePath, "base-path", "", "URL `path` to serve the dashboard under, e.g. /plenum (default the root)")
	fs.BoolVar(&o.Actions, "actions", false, "enable revive, cancel and signal (loopback addresses only)")
	fs.BoolVar(&o.Expose, "expose-without-auth", false, "serve the read-only pages, every payload included, with no authentication on a non-loopback --listen address")
	fs.Func("allow-host", "a host `name` requests may use besides localhost and the loopback addresses (repeatable)", func(v string) error {
		o.AllowHosts = append(o.AllowHosts, v)
		return nil
	})
	if err := cmdline.ParseFlags(fs, args); err != nil {
		return err
	}
	return runDashboard(ctx, e.stdout, e.stderr, o)
}

// runDashboard serves the dashboard until ctx ends, then shuts the server
// down gracefully. Warnings go to errw.
func runDashboard(ctx context.Context, w, errw io.Writer, o dashboardOptions) error {
	if err := o.CheckPrefix(); err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return cmdline.Usagef("--listen %q: want host:port, e.g. 127.0.0.1:8080", o.Listen)
	}
	if o.Actions && !loopback(host) {
		return cmdline.Usagef("--actions on %s: refused, this command has no authentication; listen on 127.0.0.1 (or ::1), or mount package dashboard behind your own authentication", o.Listen)
	}
	if !loopback(host) && !o.Expose {
		return cmdline.Usagef("--listen %s: refused, this command has no authentication and would show every queue, item payload, result and error to whoever reaches that address; listen on 127.0.0.1 (or ::1), add --expose-without-auth to serve the read-only pages there anyway, or mount package dashboard behind your own authentication", o.Listen)
	}
	opts := dashboard.Options{
		Prefix:  o.BasePath,
		Actions: o.Actions,
		// Refused above unless the listener is loopback.
		AllowUnauthenticatedActions: o.Actions,
		AllowedHosts:                o.AllowHosts,
		// The audit trail of the actions, and the database's errors.
		Logger: slog.New(slog.NewTextHandler(errw, nil)),
	}
	if ip := net.ParseIP(host); host != "" && !loopback(host) && (ip == nil || !ip.IsUnspecified()) {
		// The address listened on, as given: an IP literal no DNS answer
		// can rebind, or the user's own name.
		opts.AllowedHosts = append(opts.AllowedHosts, host)
	}
	if err := opts.Validate(); err != nil {
		return cmdline.Usagef("%s", strings.NewReplacer("Prefix", "--base-path", "AllowedHosts", "--allow-host").Replace(err.Error()))
	}
	src := inspectOptions{Database: o.Database}
	db, _, where, _, st, err := src.openStore(ctx)
	if err != nil {
		return err
	}
	defer db.Close()
	h, err := dashboard.New(st, opts)
	if err != nil {
		return err
	}
	network, reach := listenNetwork(host)
	ln, err := net.Listen(network, o.Listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	if !loopback(host) {
		names := "localhost or a loopback address"
		if len(opts.AllowedHosts) > 0 {
			names += ", or " + strings.Join(opts.AllowedHosts, ", ")
		}
		fmt.Fprintf(errw, "WARNING: --expose-without-auth: %s (%s) is served with no authentication: whoever reaches it reads every queue, item (payloads, results, errors), run, signal and owner of %s. Requests must name the host as %s (--allow-host adds a name).\n",
			ln.Addr(), reach, where, names)
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

// listenNetwork is the network to listen on for host, and what it
// reaches: an IPv4 address is listened on with IPv4 alone (Go's "tcp"
// would take 0.0.0.0 to mean every IPv6 address too), an IPv6 address
// with IPv6 alone, and a name or no host with both.
func listenNetwork(host string) (network, reach string) {
	ip := net.ParseIP(host)
	switch {
	case ip == nil && host == "":
		return "tcp", "every interface, IPv4 and IPv6"
	case ip == nil:
		return "tcp", "the addresses " + host + " resolves to"
	case ip.To4() != nil && ip.IsUnspecified():
		return "tcp4", "every IPv4 interface"
	case ip.To4() != nil:
		return "tcp4", "IPv4"
	case ip.IsUnspecified():
		return "tcp6", "every IPv6 interface"
	}
	return "tcp6", "IPv6"
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
