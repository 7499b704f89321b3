package main

import (
	"strings"
	"testing"

	"github.com/plenumdb/plenum/internal/cmd/cmdline"

	"github.com/plenumdb/plenum/internal/testkit/testdb"
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
	limited := testdb.LimitedCreatorRole(t, pgURL(t).String(), 3)
	code, out := runCLI(t, "conformance", "--dialect", "postgres", "--dsn", limited,
		"--run", "Claim_ExclusiveUnderConcurrency", "--max-conns", "10", "--serial")
	if code == cmdline.ExitOK {
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
