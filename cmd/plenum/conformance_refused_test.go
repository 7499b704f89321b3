package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/postgres"
)

// A database out of connections did nothing a guarantee forbids: the
// suite reports the guarantees it turned away as "could not run", with
// what to do, not as broken. The role made here has a connection limit of
// its own, below what the contention check opens at once, so that the
// server really answers 53300 (too many connections for role) while the
// server's own limits, which other tests share, stay as they are.
func TestConformance_TooManyConnectionsCouldNotRun(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs part of the conformance suite in a subprocess")
	}
	u := pgURL(t)
	role := fmt.Sprintf("plenum_limited_%08x", rand.Uint32())
	limitedRole(t, u.String(), role, 3)
	limited := *u
	limited.User = url.User(role)

	code, out := runCLI(t, "conformance", "--dialect", "postgres", "--dsn", limited.String(),
		"--run", "Claim_ExclusiveUnderConcurrency", "--max-conns", "10", "--serial")
	if code == exitOK {
		t.Errorf("exit 0 with guarantees that could not run; want non-zero")
	}
	for _, want := range []string{
		"Claim_ExclusiveUnderConcurrency  could not run",
		"0 held, 0 broken, 1 could not run",
		"COULD NOT RUN: the database refused to serve the suite (out of connections or resources)",
		"SQLSTATE 53300", "--max-conns", "--serial", "max_connections",
		"] could not run Claim_ExclusiveUnderConcurrency",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "BROKEN") {
		t.Errorf("a refused connection reported as a broken guarantee:\n%s", out)
	}
}

// limitedRole creates a login role with its own connection limit and the
// right to create tables in the public schema, and drops it (with
// whatever it still owns) when the test ends.
func limitedRole(t *testing.T, dsn, role string, limit int) {
	t.Helper()
	db, err := postgres.Open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := t.Context()
	for _, stmt := range []string{
		fmt.Sprintf("CREATE ROLE %s LOGIN CONNECTION LIMIT %d", role, limit),
		fmt.Sprintf("GRANT USAGE, CREATE ON SCHEMA public TO %s", role),
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, stmt := range []string{
			"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '" + role + "'",
			"DROP OWNED BY " + role,
			"DROP ROLE " + role,
		} {
			if _, err := db.ExecContext(ctx, stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
		}
	})
}
