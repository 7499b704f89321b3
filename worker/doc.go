// Package worker is Plenum's runtime: a client that claims items from its
// queues, runs the handler registered for each item's kind, and records the
// outcome, with a heartbeat, deadlines, a reaper and a graceful shutdown. It
// uses only core's public API and knows nothing of dialects, so it runs on
// every database Plenum does.
//
//	w, err := worker.New(store, worker.Config{Queues: map[string]worker.QueueConfig{"email": {MaxWorkers: 10}}})
//	worker.Handle(w, "email.welcome", func(ctx context.Context, job *worker.Job[WelcomeArgs]) error {
//		return send(ctx, job.Args.Address)
//	})
//	err = w.Start(ctx)
//	...
//	err = w.Stop(shutdownCtx)
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
//
// # Deadlines and liveness
//
// A claim's lease is its handler's deadline: the kind's Timeout, counted
// from when the claim was requested. The handler's context is cancelled
// Config.DeadlineMargin before the lease ends, and a handler that returns
// after that has its result refused: the attempt counts as a timeout. The
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
// # Shutdown
//
// Stop stops claiming, lets running handlers finish until its context
// ends, then cancels theirs; an item whose handler was cancelled by the
// shutdown is given back (no attempt used, no crash counted) once the
// handler has returned, and the worker deregisters, so nothing it held
// waits for a reaper.
package worker
