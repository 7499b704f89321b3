// Package chaos runs Plenum's worker runtime in several processes against
// one database while it injures them, then proves from the tables alone
// that nothing was lost and nothing was done twice.
//
// A round (Run) seeds a workload (Plan: chains of steps, each enqueuing
// the next inside its fence; large fan-outs by Store.Expand whose joins
// read their children's results by keyset pages; planned failures that
// are retried; periodic ticks; keyed items under a concurrency limit and
// under rate limits), starts worker processes (this binary run
// again, see Worker), and for its duration kills them with SIGKILL at
// random times, lets them kill themselves at the fault injection points,
// drops their database sessions, pauses them with SIGSTOP past their
// lease and runs some with their application clock hours off. Then the
// faults stop, fresh workers drain what is left, and Check reads the
// tables: every item terminal, every unit of work completed exactly once
// (an append-only audit row written inside each completion's fence),
// every barrier fired once with one join that saw every child, no claim
// held by a dead owner, crash and attempt counts that add up, and no key
// over its concurrency or rate limit (flow.go).
//
// On a server of its own (Config.Private, internal/testkit/privatedb) a
// round also cuts worker processes off from the database by dropping
// their packets (serverfaults.go), restarts the server, and fails
// PostgreSQL over to a standby; the workers' acknowledged completions
// (acks.go) then prove that nothing acknowledged was lost, and tell the
// re-runs of a failover to an asynchronous standby from violations.
package chaos
