// Package browse reads a store's tables for people: the pages of the
// dashboard, and any tool that shows what a store holds. Its reads list items, runs, a run's barriers, owners, queue
// summaries and a queue's lanes (flow control), a keyset page or a bounded count at a time, each shaped so
// that an index serves it however large the tables grow.
//
//	r := browse.New(store)
//	page, err := r.Items(ctx, browse.ItemFilter{Queue: "mail", State: core.StateDead})
//	// page.Items, then browse.ItemFilter{..., Before: page.Next} until Next is uuid.Nil
//
// It only reads, outside any transaction, and never takes a lock: a
// read-only database role is enough (SELECT on the store's tables). The
// rows it returns are core's (core.Item, core.Run, core.Barrier), read as
// core.Store.Get and Claim read them; the store's own writes and the reads
// they depend on (Get, RunItems, Children, Signals, Counts) stay in core,
// which does not import this package.
//
// It is a package of its own, beside core rather than under it, as worker
// and pipeline are: what a store does is core's, and this is one way of
// looking at it. It reads through the store's handle, dialect, table
// names and read retry, which core does not export: core exposes them to
// this package (and to the statement catalog) through an internal seam,
// internal/storesql, where the row scanning and the keyset reads are
// shared, so that a row reads the same here as in core. Every statement
// it sends is in the statement catalog (internal/catalog) too:
// templates.go lists them.
package browse
