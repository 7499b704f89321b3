// Package otelplenum traces and measures Plenum's items with
// OpenTelemetry: the trace context of the code that enqueues an item
// travels with the item, in its metadata, and becomes the parent of the
// span of the handler that runs it, in whatever process claims it; and
// the worker's events become metrics (claim latency, queue depth,
// handler duration, outcomes).
//
// It is a module of its own, so that a program that imports Plenum's
// core or worker does not inherit OpenTelemetry. It plugs into three
// generic seams of theirs:
//
//   - Telemetry.EnqueueHook, for core.Options.OnEnqueue: every item any
//     enqueue writes (Enqueue, EnqueueTx, a fence's Enqueue and Then, a
//     barrier's children, a run's first items) gets the W3C trace
//     context (traceparent, tracestate) of the enqueuing context in its
//     metadata.
//   - Telemetry.Middleware, for worker.Config.Middleware: each handler
//     call runs in a consumer span named "process <kind>", whose parent
//     is the context found in the item's metadata.
//   - Telemetry.Hooks, for worker.Config.Hooks: the metrics.
//
// Pipelines need nothing more: their steps run as handlers and enqueue
// the next step, and a fan-out's children, with the handler's context, so
// a run is one trace, step by step, across processes. A barrier's join
// item is enqueued by whichever transaction finished the last child, in
// no span of the run's: its span's parent is the step that fanned out
// (read from the context its first child carries), so that the join
// hangs under the fan-out it closes.
//
// A batch handler (worker.HandleBatch) runs in one span with a link to
// each item's context, and with the context as its parent when all its
// items carry the same one.
package otelplenum
