package otelplenum

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/plenumdb/plenum/worker"
)

// The instruments' names.
const (
	// MetricClaimLatency is a histogram, in seconds, of how long each
	// claimed item waited: from the time it became available to its
	// claim, both on the database clock.
	MetricClaimLatency = "plenum.claim.latency"
	// MetricQueueDepth is a gauge of a queue's items by state, as the
	// worker's maintenance reads them (worker.EventQueueDepth).
	MetricQueueDepth = "plenum.queue.depth"
	// MetricHandlerDuration is a histogram, in seconds, of how long each
	// handler ran, by outcome.
	MetricHandlerDuration = "plenum.handler.duration"
	// MetricOutcomes counts the items' outcomes: completed, failed (to
	// run again), snoozed, dead, released, lost.
	MetricOutcomes = "plenum.outcomes"
)

// The attributes of the metrics and spans, besides the messaging ones.
const (
	AttrQueue   = attribute.Key("messaging.destination.name")
	AttrKind    = attribute.Key("plenum.kind")
	AttrState   = attribute.Key("plenum.state")
	AttrOutcome = attribute.Key("plenum.outcome")
	AttrItemID  = attribute.Key("messaging.message.id")
	AttrAttempt = attribute.Key("plenum.attempt")
)

type instruments struct {
	claimLatency metric.Float64Histogram
	depth        metric.Int64Gauge
	duration     metric.Float64Histogram
	outcomes     metric.Int64Counter
}

func newInstruments(m metric.Meter) (instruments, error) {
	var i instruments
	var errs [4]error
	i.claimLatency, errs[0] = m.Float64Histogram(MetricClaimLatency, metric.WithUnit("s"),
		metric.WithDescription("How long claimed items waited, from available to claimed, on the database clock."))
	i.depth, errs[1] = m.Int64Gauge(MetricQueueDepth, metric.WithUnit("{item}"),
		metric.WithDescription("A queue's items by state."))
	i.duration, errs[2] = m.Float64Histogram(MetricHandlerDuration, metric.WithUnit("s"),
		metric.WithDescription("How long handlers ran, by outcome."))
	i.outcomes, errs[3] = m.Int64Counter(MetricOutcomes, metric.WithUnit("{item}"),
		metric.WithDescription("Items' outcomes."))
	return i, errors.Join(errs[:]...)
}

// Hooks returns the worker hooks that record the metrics; give them to
// worker.Config.Hooks (with worker.HookFunc, they combine with others).
func (t *Telemetry) Hooks() worker.Hooks { return worker.HookFunc(t.event) }

func (t *Telemetry) event(ctx context.Context, e worker.Event) {
	switch e.Kind {
	case worker.EventClaimed:
		it := e.Item
		if it.ClaimedAt.IsZero() || it.AvailableAt.IsZero() {
			return
		}
		t.m.claimLatency.Record(ctx, max(it.ClaimedAt.Sub(it.AvailableAt).Seconds(), 0),
			metric.WithAttributes(AttrQueue.String(e.Queue), AttrKind.String(it.Kind)))
	case worker.EventQueueDepth:
		for state, n := range e.Depth {
			t.m.depth.Record(ctx, n, metric.WithAttributes(AttrQueue.String(e.Queue), AttrState.String(string(state))))
		}
	case worker.EventCompleted, worker.EventFailed, worker.EventSnoozed, worker.EventDead,
		worker.EventReleased, worker.EventLost:
		attrs := metric.WithAttributes(AttrQueue.String(e.Queue), AttrKind.String(e.Item.Kind), AttrOutcome.String(string(e.Kind)))
		t.m.outcomes.Add(ctx, 1, attrs)
		if e.Duration > 0 {
			t.m.duration.Record(ctx, e.Duration.Seconds(), attrs)
		}
	}
}
