// Package catalog enumerates every statement a store sends: core's
// templates (claims, fences, barriers, runs, signals, the reaper,
// retention) and the browse package's reads, each rendered exactly as a
// store sends it on a dialect, at any size (IN lists, CASE lists,
// multi-row VALUES, LIMIT), the dialect's claim included.
//
// It exists for tests and checks, not for users, which is why it is
// internal: a grammar check of a database that does not run in CI (the
// sqlcheck module, which imports it under the same module path) sees every
// statement a store can send, and a test that records what reaches a
// server tells with Match whether each statement is one of them, so that
// a statement missing from the catalog fails CI.
//
// The templates stay with the packages that send them: core and browse
// expose them through internal/storesql, and neither links this package,
// its matching or its recording database/sql driver into users' binaries.
// A dialect's Claim is rendered by running it against that driver, a
// stand-in connection that records what it is sent.
package catalog
