// Package worker is Plenum's runtime: a client that claims items from its
// queues, runs the handler registered for each item's kind, and records the
// outcome, with a heartbeat, deadlines, a reaper and a graceful shutdown. It
// uses only core's public API and knows nothing of dialects, so it runs on
// every database Plenum does.
//
//	var Welcome = worker.NewKind[WelcomeArgs]("email.welcome")
//
//	w, err := worker.New(store, worker.Config{Queues: map[string]worker.QueueConfig{"email": {MaxWorkers: 10}}})
//	Welcome.Handle(w, func(ctx context.Context, job *worker.Job[WelcomeArgs]) error {
//		return send(ctx, job.Args.Address)
//	})
//	err = w.Start(ctx)
//	...
//	_, err = Welcome.Enqueue(ctx, store, WelcomeArgs{Address: "ada@example.com"}, worker.EnqueueParams{Queue: "email"})
//	...
//	err = w.Stop(shutdownCtx)
//
// # Kinds
//
// A Kind binds a kind's name to the type of its items' arguments, once:
// Kind.Handle registers its handler, whose Job[T] carries the payload
// decoded into T, and Kind.Enqueue, EnqueueMany and EnqueueTx (inside the
// caller's transaction) encode a T as the payload, so that the code that
// enqueues and the code that handles cannot disagree on either. Kind.Spec
// gives the core.ItemSpec for the calls that take one (a fence's Enqueue,
// several kinds in one Store.Enqueue, a periodic job). An args value that
// does not encode is refused naming the kind, before anything is written.
// Handle with a kind string and core.Store.Enqueue with a JSON payload
// are the untyped forms, for the same items.
//
// # Batch handlers
//
// HandleBatch (or Kind.HandleBatch) registers a handler that gets up to
// BatchConfig.MaxBatch claimed items of its kind in one call, for work
// that costs less done together. Each job's outcome is set on it
// (Job.Succeed, Retry, Dead, Snooze), the others take the handler's
// returned error, and all of them are written in one transaction,
// core.Store.FinishMany, each row fenced by its own claim token. The
// hooks hear each item's outcome on its own.
//
// # Middleware
//
// Config.Middleware wraps every handler's call, plain and batch, in the
// goroutine that runs it: each Middleware's Wrap gets the next
// HandlerFunc and the Call (queue, kind, the claimed items) and returns
// the function called in its place, for what must surround handlers,
// such as tracing spans (the otelplenum module). A middleware that sets
// Metadata gets the items' metadata (Call.Metadata), read in one
// statement per claim; without any, the worker reads none.
//
// # Flow keys
//
// An item's flow key (EnqueueParams.FlowKey, or a kind's
// KindOptions.FlowKey computed from its args) puts it in its key's lane of
// the queue, under the key's limits (core.Store.SetLimit). A queue's loop
// that has met a flow key waits after a short claim no longer than until
// its lanes' next turn (core.Store.NextClaimSince), so that a rate-limited
// key runs at its rate without being polled in a tight loop, and claims
// again as its slots free. EventHeld reports the keys a claim held back.
//
// # Outcomes
//
// A handler that returns nil completes its item, with the result set by
// Job.SetResult (completions are batched: one CompleteMany for the items
// that finish together). An error uses the attempt: the item runs again
// after the kind's backoff, counted on the database clock, until its
// attempts run out and it is dead. Discard(err) makes it dead at once;
// Snooze(d) puts it back for d without using an attempt. A panic is
// recovered and counts as a failed attempt, its stack kept in the error.
// Every failed attempt's error stays readable in the item's history
// (core.Store.Attempts), not only the last. Worker.PauseQueue pauses a
// queue in every process until Worker.ResumeQueue.
//
// # Connections
//
// A worker's store calls run at once on up to a claim per queue, two
// completion batches, the heartbeat, the cancellation watcher and the
// maintenance, and the PostgreSQL wake-ups hold one more session: keep
// that many sessions idle in the *sql.DB (SetMaxIdleConns; database/sql
// keeps two by default), or the worker opens new ones all the time.
//
// Each handler may hold one more, inside its fence. New refuses a pool
// bounded below the sum (MinOpenConns; db.SetMaxOpenConns, which each
// dialect's Open sets to dialect.DefaultMaxOpenConns), since handlers
// holding every connection would keep the heartbeat waiting until the
// worker was taken for dead. It counts one worker: FitPool sizes a pool
// for several, and the application's own calls need theirs besides.
//
// # Pickup latency
//
// Each queue's claim loop polls every Config.PollInterval and wakes at once
// on the store's wake-ups (core.Store.Subscribe): an enqueue through the
// same store in this process and, on PostgreSQL, an enqueue from any
// process, through NOTIFY. A lost wake-up costs at most a poll interval.
// Config.PollOnly turns wake-ups off.
//
// # Deadlines and liveness
//
// A handler's deadline is its kind's Timeout, counted from when the claim
// was requested. A claim's lease is the longest Timeout among the
// worker's kinds (one claim batch may hold items of any kind), so that a
// reaper leaves every handler its whole deadline. The handler's context is
// cancelled Config.DeadlineMargin before its deadline, and a handler that returns
// after that has its result refused: the attempt counts as a timeout. A
// Job.Fence or Job.Settle after that, or a store call that writes with
// Job.Claim, is refused too, whatever context it is given: the database
// checks the deadline in the write's own transaction, on its own clock,
// so a late result never commits. The
// heartbeat writes only the worker's own row; the worker counts itself lost,
// stops claiming and cancels every handler when the store says it was
// reaped (core.ErrOwnerLost) or when no heartbeat has succeeded for
// StaleAfter minus two heartbeat intervals, before any reaper could take
// its claims: it never runs on as a zombie. Done and Err report it.
//
// # Delivery and idempotency
//
// Delivery is at-least-once: a handler can run again for the same item
// after a crash, a lost heartbeat or a timeout, even when its first run
// did its work. What is exactly-once is what a handler writes through
// Job.Fence: those writes commit in one transaction with the item's
// completion, or not at all, and a run whose claim was lost writes nothing.
// For effects outside the database (an e-mail, a payment), Job.IdempotencyKey
// is the value to hand to the other system: the item's id, which every run
// of the item shares (unlike the claim token, which changes with each
// claim), and which no other item has.
//
// # Periodic work
//
// Config.Periodic lists schedules, each an interval or a five-field cron
// expression read in UTC or in an IANA zone (ScheduleSpec.TimeZone), whose
// ticks the worker enqueues as items every
// PeriodicInterval (core.Store.EnqueueDue); any worker claiming the item's
// queue runs it.
//
//	Periodic: []worker.PeriodicJob{
//		{Name: "invoices", Cron: "0 2 * * MON-FRI", Item: core.ItemSpec{Queue: "batch", Kind: "invoices.send"}},
//		{Name: "sweep", Every: 5 * time.Minute, MaxCatchUp: 3, Item: core.ItemSpec{Queue: "batch", Kind: "sweep"}},
//	},
//
// Tick times come from the database clock. Each schedule has a watermark
// row, the last tick enqueued; the tick's item is inserted in the
// transaction that moves the watermark by a compare-and-set, so that any
// number of processes running the same schedules enqueue each tick once,
// and its key, core.TickKey(name, tick), is the same in every process
// (core.ParseTickKey gives the tick back to the handler). The watermark,
// not the items, remembers what ran: retention deleting a finished tick
// never makes it due again. A schedule first seen records its latest tick
// and starts with the next one. After downtime the missed ticks are found
// in closed form, and the latest MaxCatchUp of them enqueued (0 or 1: the
// latest only); the rest are skipped. A tick's item is delivered
// at least once, like any other.
//
// With Config.StoredSchedules, the worker enqueues the ticks of the
// schedules kept in the database as well (core.Store.SetSchedule and
// EnqueueStoredDue): an operator sets, pauses, resumes, triggers,
// backfills and deletes them while workers run, each tick still enqueued
// once.
//
// # Shutdown
//
// Stop stops claiming, lets running handlers finish until its context
// ends, then cancels theirs; an item whose handler was cancelled by the
// shutdown is given back (no attempt used, no crash counted) once the
// handler has returned, and the worker deregisters, so nothing it held
// waits for a reaper.
package worker
