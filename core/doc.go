// Package core is Plenum's dialect-agnostic store, which writes under
// transactions: claims, fences, leases, owners and their heartbeats, the
// reaper, fan-out and fan-in barriers, runs and signals, retention, and
// the retry of transient errors, on any database a dialect package
// describes.
//
// Open a Store on a *sql.DB with one dialect (sqlite.Dialect(),
// postgres.Dialect(), ...); every method takes a context first and a
// params struct where it has options, and returns typed errors (the
// sentinels ErrClaimLost, ErrInvalidInput, ... matched with errors.Is, and
// *InputError naming the refused field).
//
// # Guarantees
//
// Delivery is at-least-once; what is exactly-once is the effect of writes
// made through a fence and the state changes below. The conformance
// package proves each of them against a real database.
//
//   - Claims are exclusive, and go by priority, then available time, then
//     id. The items of one enqueue (same priority and delay) are claimed in
//     the order given, however many statements the enqueue takes: rows are
//     split into statements in the caller's order, and each statement's
//     clock reading never runs behind the one before.
//   - Every change a claim holder makes is fenced on (id, claim token).
//     Fence reports held == false, with no error, for the fenced claim's
//     own loss only; an error of fn's about another item's lost claim is
//     returned as fn's error, with held == true. A claim with a deadline
//     (Claim.Within) is also refused past it, on the database clock, with
//     ErrPastDeadline.
//   - Keys live in two namespaces that cannot collide. A caller's Key is
//     any text up to 200 characters except the form reserved for
//     children: a UUID in its 36-character text form (any case) followed
//     by a slash. A child of barrier B with key k is stored under
//     "<B>/<k>" in its queue. A row that holds a child's stored key without
//     being B's child (only a writer outside the store can make one)
//     fails the dispatch with ErrKeyConflict; it is never taken for the
//     child. A third form, a key released by ItemSpec.KeyStates
//     (ReleasedKey: the key, U+0001, the holder's id), contains a control
//     character, which no caller's key may.
//   - Fan-in: every terminal transition of a child counts once at its
//     barrier, in the same transaction, and the barrier fires once. A
//     parent that seals a barrier (its sub-fan-in) makes the barrier's
//     join report where the parent reports (the parent's own barrier B1,
//     which expects one more arrival). If the parent completes in the
//     sealing transaction (Expand with CompleteParent, or Fenced.Complete
//     after Fenced.Seal), the join takes the parent's place at B1. If it
//     does not, the parent stays a member of B1 and its own end (completed,
//     dead or cancelled) counts there too. Either way B1 fires only after
//     the parent and its sub-fan-in have both finished, and B1's join sees
//     the parent's failure. Seal after Complete in one fence is refused.
//   - A paused queue (PauseQueue) gives no claim begun after the pause
//     committed anything, in any process, until ResumeQueue: the claim
//     statement reads the pause itself.
//   - Every attempt that ends without success (Fail, a reaper's timeout or
//     crash) writes one row of its item's history (Attempts) in the
//     transaction of its state change, numbered after the item's last row,
//     so a row is never written twice nor lost; Purge deletes the history
//     with its item. Cancel, CancelRun, Revive and ReviveRun keep it.
//
// # Runs: what pipelines are built on
//
// A run (CreateRun, CreateRunTx: once per Name and Key, in the caller's
// transaction if need be) groups items: ItemSpec.Run, inherited by a
// barrier's children and join and by Fenced.Then's next step.
//
//   - Chain handover: Fenced.Then completes the fenced item and enqueues
//     its next step in one transaction; the next step takes the item's
//     place at its barrier (expected unchanged, the item's completion
//     counted nowhere), so the barrier cannot fire between two steps.
//   - Signals: Signal stores a signal once per (run, name, key) and, under
//     the run row's lock, wakes the run's items waiting on that name.
//     Fenced.Await takes an untaken signal exactly once, under the same
//     lock (so a signal is never missed, whichever comes first), or gives
//     the claim back and waits. A waiting item is an available item whose
//     available_at is its deadline (or MaxDelay ahead): the claim path is
//     unchanged, and a passed deadline makes it claimable, when Await
//     reports the timeout.
//   - Halts: an item of a run that dies halts the run in the same
//     transaction (Fenced.Halt with the caller's reason), and the run's
//     HaltItem is enqueued there once per halt, keyed by the halt's id.
//   - CancelRun ends the run cancelled, then cancels its unfinished items
//     in bounded pages (holders lose their claims, cancellations count at
//     barriers); a barrier of a cancelled run fires its join cancelled.
//   - ReviveRun revives a run's dead items; one whose barrier fired
//     re-arms it (ReviveBarrier): the dead children are revived and taken
//     off the failed count, the barrier is unfired with its generation
//     grown by one, the old join leaves the barrier above (re-armed too if
//     it fired), and the join runs again with the new results.
//
// Bad input gets an *InputError naming the field, before anything is
// written, and what one database would refuse is refused on all of them:
//
//   - integers: MaxAttempts of items, children and joins, and
//     Options.DefaultMaxAttempts, in [0, MaxAttemptsCeiling] (the
//     attempt columns are 32-bit signed on every database); Priority
//     within ±MaxPriority; ReapParams.MaxCrashes in [1,
//     MaxAttemptsCeiling]; negative Options.MaxPayloadBytes and
//     DefaultMaxAttempts refused at Open; delays within [0, MaxDelay]
//     (an Options.Backoff result outside is taken as the nearer bound).
//   - JSON (payloads, results, join payloads): valid JSON in valid UTF-8,
//     at most Options.MaxPayloadBytes, and storable by PostgreSQL's
//     jsonb: no \u0000 escape, no lone or reversed surrogate escape
//     (\ud800 to \udfff only as a high-low pair), and numbers within
//     numeric's range (the first significant digit at most 131,072
//     places before the decimal point; at most 16,383 digits after it,
//     trailing zeros and the exponent counted as numeric counts them).
//     The check is one pass, without allocation, after json.Valid.
//   - text: queue names (also those read by Counts), kinds, keys,
//     barrier names, hosts and dispatch cursors (ChildPage.Next,
//     AddChildrenParams.From and To, at most MaxCursorBytes) must be
//     valid UTF-8 without NUL bytes, within their lengths. The error
//     text given to Fail is made storable instead of refused (invalid
//     UTF-8 and NUL become U+FFFD, cut at MaxErrorBytes), so that a
//     failure report cannot fail because of its message.
//   - names: every name the store writes (queues, kinds and keys of
//     items, children and joins; barrier, run, signal and schedule
//     names; run keys, signal keys, halt reasons, owners' names and
//     hosts) must besides be showable as it is: no C0 or C1 control
//     character (escape sequences, newlines, tabs, DEL), no
//     bidirectional override or isolate (U+202A to U+202E, U+2066 to
//     U+2069), no line or paragraph separator (U+2028, U+2029). A name
//     that only selects rows (a claim's queue, a filter of package
//     browse, Counts,
//     PauseQueue, Subscribe) is checked as text only, so that rows
//     stored before this rule can still be found, drained and paused.
//
// # Wake-ups
//
// Subscribe returns a channel that receives a wake-up when items may have
// become available in a queue: once this store commits an enqueue, a
// fence's enqueue or children, or a fired barrier's join, and, on a
// dialect that is a dialect.Notifier (PostgreSQL), once any store on the
// same tables, in any process, does. A wake-up is a hint that never
// replaces polling; the enqueuer never waits for a subscriber.
//
// # Statements
//
// Statements shared by every database are written once, with '?'
// placeholders, and expanded from a few named pieces ({items}, {now},
// {now+?}, {json?}, {lock}, ...) that the dialect supplies. A piece shows
// every bind parameter its text takes, so a statement as written has as
// many '?' as it is given arguments; the tests count them for every
// statement the store issues.
//
// Every template is named in one file (statements.go) and listed in
// another (templates.go), from which the statement catalog
// (internal/catalog, for the grammar checks of sqlcheck and the tests
// that record what reaches a server) renders every statement the store
// sends, at every size, exactly as it sends it.
//
// # What is not here
//
// Core is the store that writes under transactions, and the reads those
// writes depend on (Get, Counts, Children, RunItems, Signals, Attempts).
// The dashboard's reads, keyset pages and bounded counts for people, are
// package browse, built on core: browse.New(store). The statement
// catalog is internal/catalog. Core imports neither: they reach the
// store's handle, read retry and row scanning through
// internal/storesql, where core exposes them, so that nothing in core's
// exported API exists only to serve them.
package core
