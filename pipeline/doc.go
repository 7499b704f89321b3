// Package pipeline runs durable pipelines on Plenum's worker runtime, on
// every database Plenum supports: steps with JSON input and output,
// composed in plain Go, run as items that survive crashes, with halts,
// revive, signals and cancel.
//
// # Definitions
//
// A Flow[I, O] takes an I and gives an O. Step makes one from a
// function; the combinators compose them, and Go checks the types where
// they meet:
//
//   - Then(a, b): a chain, b gets a's output.
//   - Expand(name, list, each, collapse): fan out over the list a function
//     returns, each element the input of a child flow (each) run in
//     parallel, then collapse the children's outputs (Results, read from
//     the database by keyset pages, never all at once). ExpandStream reads
//     its elements from a source page by page, each page's children and
//     cursor committed together, so that a crashed fan-out resumes where
//     it stopped, for lists larger than memory.
//   - Divide(name, branches, combine): fixed parallel branches on the
//     same input, then combine their outputs, in branch order.
//   - Route(name, choose, routes): run the flow that choose names.
//   - Await(name, signal, timeout, fn): wait for a named signal sent to
//     the run (Engine.Signal), or for the timeout.
//   - WaitUntil(name, cond, onTimeout, opts): check a condition on a
//     schedule of growing intervals until it holds, snoozed between checks
//     (no worker slot held), then halt or take onTimeout once its timeout
//     passes.
//   - RepeatUntil(name, body, opts): run body every interval, each
//     repetition its own item taking effect once (its fenced writes
//     commit with the making of the next), until body says done or the
//     schedule's end passes, with a rule for the repetitions a downtime
//     missed (RunMissed, SkipToLatest) and for one that failed
//     (HaltOnError, ContinueOnError).
//   - Sleep(name, d), SleepUntil(name, until): sleep for a duration, or
//     until a time of the input, on the database clock, snoozed (no
//     worker slot or claim held, and a restart changes nothing), then
//     pass the input on.
//
// Flows nest to any depth (Options.MaxDepth bounds how deep fan-outs
// nest). A collapse and a combine are built together with their fan-out,
// so each fan-in is paired with its own fan-out by construction: an
// expand inside a divided branch inside an expand collapses where it
// should, whatever lies between. Define validates a flow as a named
// Pipeline and reports every problem it finds at once.
//
// # Runs
//
// An Engine runs pipelines on a worker.Worker: Register each pipeline
// (in every process, before the worker starts), then trigger runs with
// the pipeline's own input type, p.Trigger(ctx, engine, input) (or
// p.TriggerTx, inside the caller's transaction); Engine.Trigger and
// TriggerTx take any input that encodes to JSON the input type decodes. Every step execution is
// an item of the run on the engine's queue, payload and result its input
// and output:
//
//   - A chain's step completes and enqueues the next step in one fenced
//     transaction that hands its place at the enclosing fan-in to the next
//     step (core's Fenced.Then): a chain inside a fan-out counts as one
//     child, arriving when its last step finishes.
//   - A fan-out is a barrier: its children are the first steps of its
//     branches or elements, with deterministic keys, and its join, which
//     the barrier enqueues once when every child has finished, runs the
//     collapse or combine.
//   - The last step's fence completes the run with its output.
//
// Every function of a run (a step, route, expand's list or source,
// collapse, combine or await) can read the input the run was triggered
// with: RunInput[T](ctx), typed, or RunInput[json.RawMessage] for the
// JSON. A flow need not thread the fields its later steps need through
// every output. The input is read from the run when a function first asks
// for it and kept by the engine (a run's input never changes), so the
// steps of a run that one process executes read it once, and no item
// carries a copy of it.
//
// What a step learns on the way goes in the run's context: a small
// key-value document that a step, await, combine or collapse writes with
// SetRunContext, in the transaction that completes it (so an attempt that
// does not complete writes nothing), and any later function of the run
// reads with RunContext[T](ctx, key). When branches write the same key,
// the write that commits last wins. Get shows it (Run.Context), with the
// item that wrote each key.
//
// Delivery is at-least-once: a step's function can run again after a
// crash. StepInfo(ctx).IdempotencyKey names the step's execution in its
// run, the same after retries, crashes and revives, for effects outside
// the database; Fence makes a step's own database writes commit with its
// completion, exactly once.
//
// Each step can carry its own timeout, delay and retry policy
// (StepOptions.Timeout, Delay, MaxAttempts and Backoff), overriding the
// pipeline's Options: an attempt past its timeout counts as failed, and
// whatever it returns or fences after it is refused by the database, on
// its clock. Retries wait their Backoff (exponential, capped, with
// jitter), delays and waits counted on the database clock.
//
// Engine.Get shows a run's state (running, waiting, halted, completed,
// cancelled) and every step's state, attempts with their errors, times,
// input and output; Engine.Wait waits for a run to stop.
//
// # Halts, revive and cancel
//
// A run halts when a step uses up its attempts (StepOptions.MaxAttempts,
// Options.MaxAttempts) or returns a Permanent error, when its workers
// die running a step too often (the worker's Config.MaxCrashes), when an
// expand's source goes over its fan-out cap (checked on every page of a
// stream; the children already made are cancelled), when a route names
// no flow, when a WaitUntil times out with no flow to take instead, or when an item names a step the registered definition lacks,
// or a version of its pipeline (Options.Version) that the engine does not
// register.
//
// # Versions
//
// A run records the version of the definition it was triggered on
// (Options.Version), and every step of it runs on that version's
// definition: register the old versions of a changed pipeline beside the
// new one (Engine.Register(v2, v1)) while their runs drain. A step of a
// run whose version is not registered halts the run with
// ReasonVersionNotRegistered instead of running on another definition;
// the run revives once the version is registered again.
// The halt, with its reason, commits with the failure, and enqueues in
// that same transaction the item that calls EngineOptions.OnHalt after the
// commit, outside any transaction, at least once, with the halt's id to
// deduplicate by; Engine.Get shows the same Halt (step, item, reason, and
// the step's last error as its detail) while the run is halted. A
// fan-out whose child failed does not run its join: the failure climbs to
// the fan-ins above.
//
// A halted run keeps its steps for as long as it stays halted: the
// worker's retention (its Config.RetainFor) deletes no item or fan-out of a
// halted or waiting run, whatever its age, so that a run halted over a
// weekend can still be revived on Monday. Once the run completes or is
// cancelled, its steps go at the next retention pass that finds them older
// than RetainFor.
//
// Revive brings a halted run back: the failed steps run again, with
// their attempts reset and their earlier attempts kept in their history,
// and the fan-ins above them run again with the new results; completed
// steps do not run again. A halted run with no failed step to run again
// and nothing left to run is refused (core.ErrNothingToRevive) and stays
// halted: Cancel it. Cancel cancels every unfinished step of a run
// (running handlers' contexts end), stops its fan-outs and joins, and
// ends the run cancelled.
//
// # Signals
//
// Engine.Signal stores a signal for a run once (by name, or by an
// explicit key) and wakes the step waiting on it at once; a signal sent
// before the step waits is kept for it. The waiting step takes the signal
// in the transaction that completes it, so a signal is taken once and a
// failed attempt does not lose it. A waiting step holds no claim and no
// worker slot.
package pipeline
