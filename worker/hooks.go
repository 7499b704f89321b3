package worker

import (
	"context"
	"time"

	"github.com/plenumdb/plenum/core"
)

// EventKind says what an Event reports.
type EventKind string

// The events a worker reports to its Hooks.
const (
	// EventClaimed: the worker claimed Item (one event per item).
	EventClaimed EventKind = "claimed"
	// EventStarted: Item's handler starts next: the claim loop reports
	// it as it hands the run to the goroutine that calls the handler.
	EventStarted EventKind = "started"
	// EventCompleted: Item completed; Duration is the handler's run time.
	EventCompleted EventKind = "completed"
	// EventFailed: an attempt of Item failed (Err) and it will run again.
	EventFailed EventKind = "failed"
	// EventSnoozed: Item was put back for later without using an attempt.
	EventSnoozed EventKind = "snoozed"
	// EventDead: Item is dead (attempts used up, Discard, or too many
	// crashes); Err is the last error.
	EventDead EventKind = "dead"
	// EventReleased: Item was given back unfinished at shutdown.
	EventReleased EventKind = "released"
	// EventLost: Item's claim was lost (cancelled, reaped, or finished by
	// another): its outcome was not recorded.
	EventLost EventKind = "lost"
	// EventReaped: a reaper pass of this worker's maintenance released
	// claims or removed owners; Reap counts what it did.
	EventReaped EventKind = "reaped"
	// EventBarrierFired: a fan-in barrier fired in a transaction this
	// worker committed (completing, failing or reaping its last child, or
	// sealing it in a handler's Expand or fence run with the handler's
	// context); Barrier describes it and Queue is its join's queue. Each
	// firing is reported once, by the process whose transaction fired it.
	EventBarrierFired EventKind = "barrier_fired"
	// EventPurged: a retention pass deleted what Purge counts.
	EventPurged EventKind = "purged"
	// EventTicked: the maintenance enqueued Tick, the item of one tick of
	// a periodic schedule (Config.Periodic).
	EventTicked EventKind = "ticked"
	// EventQueueDepth: Depth holds Queue's item counts by state, read by
	// the maintenance loop.
	EventQueueDepth EventKind = "queue_depth"
	// EventHeld: a claim of Queue left items of the flow key Held.Key
	// because of the key's limits (core.Store.SetLimit): at its
	// concurrency or per-process limit, or its rate spent until
	// Held.Until. A key is reported by the claim that meets the limit,
	// not again by the claims that find it still held.
	EventHeld EventKind = "held"
)

// Event is one thing the worker did. Fields that do not apply to Kind are
// zero.
type Event struct {
	Kind  EventKind
	Queue string
	// Item is the item as claimed (attempt and crash count included).
	Item core.Item
	// Err is the handler's error, for failed and dead items.
	Err error
	// Duration is how long the handler ran, for finished items.
	Duration time.Duration
	// Reap is what a reaper pass did, for EventReaped.
	Reap core.ReapResult
	// Barrier is the barrier that fired, for EventBarrierFired.
	Barrier core.FiredBarrier
	// Purge is what a retention pass deleted, for EventPurged.
	Purge core.PurgeResult
	// Tick is the tick enqueued, for EventTicked.
	Tick core.Tick
	// Depth counts Queue's items by state, for EventQueueDepth.
	Depth map[core.State]int64
	// Held is the flow key held back and why, for EventHeld.
	Held core.Held
}

// Hooks receive the worker's events, for metrics and tracing. Event is
// called from the worker's goroutines, concurrently: it must be quick and
// safe for concurrent use. Adapters for metrics systems live outside this
// module, so that users of the worker do not inherit their dependencies.
type Hooks interface {
	Event(ctx context.Context, e Event)
}

// HookFunc makes a function a Hooks.
type HookFunc func(ctx context.Context, e Event)

// Event calls f.
func (f HookFunc) Event(ctx context.Context, e Event) { f(ctx, e) }
