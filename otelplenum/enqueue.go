package otelplenum

import (
	"context"

	"go.opentelemetry.io/otel/propagation"

	"github.com/plenumdb/plenum/core"
)

// EnqueueHook returns the enqueue hook that writes the trace context of
// the enqueuing context into each item's metadata (with the default
// propagator, the W3C traceparent and tracestate entries): give it to
// core.Options.OnEnqueue. A context without a valid span adds nothing.
// Entries the caller set on the item keep the caller's values (the store
// merges that way).
func (t *Telemetry) EnqueueHook() core.EnqueueHook {
	return func(ctx context.Context, e core.Enqueuing) map[string]string {
		md := propagation.MapCarrier{}
		t.prop.Inject(ctx, md)
		if len(md) == 0 {
			return nil
		}
		return md
	}
}
