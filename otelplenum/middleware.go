package otelplenum

import (
	"context"
	"errors"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
)

// Middleware returns the handler middleware that runs each handler call
// in a consumer span, "process <kind>", whose parent is the trace
// context the item's metadata carries (from its enqueue): give it to
// worker.Config.Middleware of a worker on store. It asks the worker for
// the items' metadata, which costs one statement per claim that returned
// items (worker.Middleware.Metadata). A join item (core.Item.JoinOf),
// which no caller enqueued, takes as its parent the context its
// barrier's first child carries, the span of the step that fanned out:
// two more statements per join (Store.Children and Store.ItemMetadata).
// With a nil store a join's span starts a trace of its own. The span records the handler's error and
// ends when the handler returns; a snooze (worker.Snooze) is no error.
// An item whose metadata carries no context (enqueued without a span, or
// before the hook was set) starts a trace of its own.
func (t *Telemetry) Middleware(store *core.Store) worker.Middleware {
	return worker.Middleware{Metadata: true, Wrap: func(next worker.HandlerFunc) worker.HandlerFunc {
		return func(ctx context.Context, c *worker.Call) error {
			ctx, span := t.start(ctx, store, c)
			err := next(ctx, c)
			end(span, err)
			return err
		}
	}}
}

// start opens the span of call c.
func (t *Telemetry) start(ctx context.Context, store *core.Store, c *worker.Call) (context.Context, trace.Span) {
	attrs := []attribute.KeyValue{
		attribute.String("messaging.system", "plenum"),
		attribute.String("messaging.operation.type", "process"),
		attribute.String("messaging.operation.name", "process"),
		AttrQueue.String(c.Queue),
		AttrKind.String(c.Kind),
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindConsumer)}
	var parent trace.SpanContext
	if len(c.Items) == 1 {
		it := c.Items[0]
		attrs = append(attrs, AttrItemID.String(it.ID.String()), AttrAttempt.Int(it.Attempt))
		parent = t.parentOf(ctx, store, c, it)
	} else {
		attrs = append(attrs, attribute.Int("messaging.batch.message_count", len(c.Items)))
		same := true
		for i, it := range c.Items {
			sc := t.parentOf(ctx, store, c, it)
			if sc.IsValid() {
				opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{AttrItemID.String(it.ID.String())}}))
			}
			switch {
			case i == 0:
				parent = sc
			case !sc.Equal(parent):
				same = false
			}
		}
		if !same {
			parent = trace.SpanContext{}
		}
	}
	opts = append(opts, trace.WithAttributes(attrs...))
	if parent.IsValid() {
		ctx = trace.ContextWithRemoteSpanContext(ctx, parent)
	} else {
		opts = append(opts, trace.WithNewRoot())
	}
	return t.tracer.Start(ctx, "process "+c.Kind, opts...)
}

// parentOf is the context the metadata of item it carries; for a join without
// one, the one its barrier's first child carries: the span of the step
// that fanned out.
func (t *Telemetry) parentOf(ctx context.Context, store *core.Store, c *worker.Call, it core.Item) trace.SpanContext {
	sc := t.extract(c.Metadata(it.ID).Values)
	if sc.IsValid() || it.JoinOf == uuid.Nil || store == nil {
		return sc
	}
	kids, err := store.Children(ctx, core.ChildrenParams{Barrier: it.JoinOf, Limit: 1})
	if err != nil || len(kids) == 0 {
		return sc
	}
	md, err := store.ItemMetadata(ctx, kids[0].ID)
	if err != nil {
		return sc
	}
	return t.extract(md[kids[0].ID].Values)
}

// extract reads the span context md carries.
func (t *Telemetry) extract(md map[string]string) trace.SpanContext {
	if len(md) == 0 {
		return trace.SpanContext{}
	}
	return trace.SpanContextFromContext(t.prop.Extract(context.Background(), propagation.MapCarrier(md)))
}

// end ends span with the handler's error.
func end(span trace.Span, err error) {
	var snooze *worker.SnoozeError
	switch {
	case err == nil:
	case errors.As(err, &snooze):
		span.SetAttributes(attribute.String("plenum.snooze", strconv.FormatFloat(snooze.After.Seconds(), 'f', -1, 64)+"s"))
	default:
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
