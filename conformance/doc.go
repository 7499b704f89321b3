// Package conformance is Plenum's shared test suite: it proves, against one
// real database, every guarantee the store makes. Each dialect package runs
// it from its own tests, and so can anyone against their own server, version
// and settings (a managed MySQL, Aurora, a CockroachDB cluster, an Oracle
// instance), from an ordinary go test.
//
// # What it proves
//
// Run runs one subtest per guarantee of the design, each named for what it
// proves (Names lists them), and each able to fail: they count exactly
// rather than check for the absence of errors.
//
//   - Claims: concurrent claimers never hold the same item and every item
//     completes exactly once; claims go by priority, then available_at,
//     then id; the items of one enqueue are claimed in the order given,
//     also across the statements of a large enqueue, whatever their keys;
//     a claim locks only the rows it takes.
//   - Fencing: a holder whose claim was reaped and taken over changes
//     nothing (Complete, Fail, Release, Extend and Fence all refuse); what
//     a fence writes, the caller's own statements included, commits with
//     it or not at all, also when its context ends half way, and also when
//     it records a failure (Fenced.Fail); a store call made with a fence's
//     context is refused (ErrInsideFence) instead of waiting on the fence;
//     completing again with the same claim is harmless; held == false
//     means the fenced claim's own loss only.
//   - Recovery: a heartbeat writes only its owner's row, moves no lease,
//     and (where there are row locks) returns promptly while a fence holds
//     a claimed row; an owner that stops heartbeating is reaped, every
//     claim it held released as a crash (not an attempt) whatever its
//     lease, and a poison item dead-lettered; a lease that runs out under
//     a live, heartbeating owner is a timeout; ExtendMany moves the leases
//     of the claims still held and names the lost ones; concurrent reapers
//     release each claim once.
//   - Retention: Purge deletes finished items and fired barriers past an
//     age, in bounded passes, and never the children a barrier or its
//     join still needs; an item's history goes with it; purgers running
//     at once delete each item once, and no live one.
//   - Periodic work: stores on both sides of several clock offsets calling
//     EnqueueDue at once enqueue each tick once while retention deletes
//     finished ticks, none brought back; after a clock jump of years the
//     latest tick, or the latest N, are caught up at once.
//   - Paused queues: after PauseQueue commits no store claims the queue's
//     items, whatever its clock, until ResumeQueue; pausing and resuming
//     while others claim leaves every item claimed once.
//   - History: every failure, timeout and crash is one row of its item's
//     history, numbered in order across retries, crashes and a revival,
//     written or rolled back with its state change (a fence's Fail too);
//     concurrent reapers write one row per crash.
//   - Database clock: only the database's clock gates visibility.
//   - Fan-out and fan-in: a dispatch resumes from its saved cursor without
//     duplicates; callers' keys cannot take a child's place (the form
//     reserved for children's keys is refused, and a row holding a child's
//     key that is not the child fails the dispatch); every child's end
//     counts once at its barrier under concurrent completions, failures,
//     cancellations and crashes; a barrier fires exactly once, at the seal
//     if its children finished first, and nested barriers fire in order; a
//     parent's barrier fires only after the parent and its own sub-fan-in
//     have both finished, on success and on failure, whichever ends last;
//     the FailBarrier policy carries a failure upwards; joins read results
//     by keyset pages.
//   - Enqueue idempotency keys (also under concurrency and past one
//     statement's bind limit), the outbox (EnqueueTx), Cancel and Revive.
//   - Bad input is refused with the documented sentinel error and changes
//     nothing, and what one database would refuse is refused on all:
//     integers beyond the 32-bit columns, JSON that PostgreSQL's jsonb
//     cannot store (NUL, lone surrogate escapes, numbers outside numeric's
//     range), text that is not UTF-8 or holds NUL (cursors, names, hosts),
//     with the values at the edges stored everywhere; concurrent start-ups
//     that migrate do not collide; transient errors under contention are
//     retried, not returned.
//
// # How it works
//
// Every subtest works under its own random table prefix ("pc" and eight hex
// digits), creates its tables with the store's migrator, and drops them when
// it ends; it never touches any other table, so it can run in a database
// that holds real data, by a user who may create tables but not databases.
// Time moves only on the database side: a second store on the same tables
// opened with core.Options.ClockOffset sees the clock hours ahead (leases
// expired, heartbeats stale) without any sleep or any host's clock. Crashes
// are simulated in-process: an owner that stops heartbeating, a fence whose
// context is cancelled between two statements, a dispatch whose source
// fails half way. No subprocess is needed, so the suite runs from any test
// binary.
//
// Subtests run in parallel (Config.Serial turns that off), and each opens
// its own *sql.DB through Config.Open; the SQLite wiring gives each its own
// database file, so that they do not queue behind SQLite's single writer.
// Config.Scale shrinks the two large workloads (1,000 items claimed by 16
// goroutines, 2,000 children fanned in) for slow databases.
//
// # Running it against your database
//
// A test file in your own module (PostgreSQL here; use your database's
// dialect package and driver):
//
//	package myapp_test
//
//	import (
//		"testing"
//
//		_ "github.com/jackc/pgx/v5/stdlib"
//		"github.com/plenumdb/plenum/conformance"
//		"github.com/plenumdb/plenum/postgres"
//	)
//
//	func TestPlenumConformance(t *testing.T) {
//		conformance.Run(t, conformance.Config{
//			Dialect: postgres.Dialect(),
//			Open:    conformance.Opener("pgx", conformance.DSN(t, "postgres")),
//		})
//	}
//
// Then: PLENUM_POSTGRES_DSN=postgres://... go test -race -run
// TestPlenumConformance. DSN reads PLENUM_<NAME>_DSN (PLENUM_POSTGRES_DSN,
// PLENUM_MYSQL_DSN, PLENUM_COCKROACH_DSN, PLENUM_ORACLE_DSN); without one
// the test is skipped with a message saying what to set, unless
// PLENUM_REQUIRE (comma-separated names, e.g. "postgres,mysql") lists the
// database, which makes it a failure, as CI wants. Harness adds a fallback
// hook, for a dialect test that can start a database itself.
package conformance
