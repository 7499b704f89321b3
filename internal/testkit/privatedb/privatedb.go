// Package privatedb starts database servers that one test owns: a
// PostgreSQL cluster or a MariaDB server of its own, in a data directory
// of its own, on a free port of an address the test chooses. A test may
// stop, kill and restart such a server, or cut it off from its clients,
// without touching the machine's shared servers, which other packages'
// tests use at the same time. A private PostgreSQL server may have a
// streaming-replication standby (Standby), which the test may cut off
// from it (Detach) and promote (Promote), with a DSN that follows the
// failover (FailoverDSN).
//
// The servers run on Linux, as their own system users (postgres, mysql): a test that
// is not run as root, or on a machine without the servers' programs, is
// skipped with a message saying what is missing, or fails where
// PLENUM_REQUIRE lists "private" (CI sets it). Every server is killed,
// with every process it started, when its test ends, failed or not.
//
// Where a server was started its test logs "conformance: private: testing
// the database of ...", and where it was skipped "conformance: no private
// database: ...": the lines the test summary of internal/cmd/gotest reads.
package privatedb

import (
	"fmt"
	"os"
	"time"

	"github.com/plenumdb/plenum/conformance"
)

// TB is what a private server needs of its owner: a test's testing.TB,
// or a program's own (the chaos harness's), which ends the goroutine
// that called Fatal, Fatalf or Skipf as a test's does (runtime.Goexit)
// and runs the functions given to Cleanup when the owner is done.
type TB interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
	Logf(format string, args ...any)
	Cleanup(func())
}

// Require is the name that PLENUM_REQUIRE lists to make a private server
// that cannot be started a failure rather than a skip.
const Require = "private"

// startWait bounds a server's start: an initdb, a crash recovery after an
// immediate stop, on a loaded machine.
const startWait = 2 * time.Minute

// Shutdown is how Stop and Restart end a server.
type Shutdown int

const (
	// Fast ends the server's sessions and shuts it down cleanly:
	// PostgreSQL's fast shutdown (SIGINT), MariaDB's normal one (SIGTERM).
	Fast Shutdown = iota
	// Immediate ends it without a clean shutdown, so that the next start
	// recovers from its log: PostgreSQL's immediate shutdown (SIGQUIT),
	// a killed MariaDB (SIGKILL).
	Immediate
)

func (m Shutdown) String() string {
	if m == Immediate {
		return "immediate"
	}
	return "fast"
}

// Options say where a private server listens.
type Options struct {
	// Addr is the IP address the server listens on. Default 127.0.0.1.
	Addr string
}

// StandbyOptions say how a standby follows its primary.
type StandbyOptions struct {
	// Synchronous makes the primary wait, before it acknowledges a
	// commit, until the standby has flushed the commit's log
	// (synchronous_standby_names naming the standby, synchronous_commit
	// on). Otherwise the standby is asynchronous: the primary
	// acknowledges a commit once it is in its own log.
	Synchronous bool
}

// skip skips t, or fails it where PLENUM_REQUIRE lists "private", saying
// why there is no private server.
func skip(t TB, why string) {
	t.Helper()
	msg := fmt.Sprintf("conformance: no %s database: %s (run the test as root on a machine with PostgreSQL 15 and MariaDB installed)", Require, why)
	if conformance.Required(Require) {
		t.Fatalf("%s; it is required: %s=%q lists %s", msg, conformance.RequireEnv, os.Getenv(conformance.RequireEnv), Require)
	}
	t.Skipf("%s; %s=%s turns this skip into a failure", msg, conformance.RequireEnv, Require)
}

func (o Options) addr() string {
	if o.Addr == "" {
		return "127.0.0.1"
	}
	return o.Addr
}
