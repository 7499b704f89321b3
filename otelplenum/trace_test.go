package otelplenum_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/otelplenum"
	"github.com/plenumdb/plenum/worker"
)

// TestTrace_HandlerSpanIsChildOfEnqueueSpan checks that an item enqueued
// inside a span is handled in a consumer span of the same trace whose
// parent is that span, naming the item, its queue, kind and attempt; that
// a handler's error marks its span; that an item enqueued outside any
// span starts a trace of its own; and that the worker's events become the
// metrics (claim latency, queue depth, handler duration and outcomes).
func TestTrace_HandlerSpanIsChildOfEnqueueSpan(t *testing.T) {
	t.Parallel()
	for _, dbase := range databases {
		t.Run(dbase.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			tel, store, w := tracedWorker(t, dbase, "otel1_")
			worker.Handle(w, "greet", func(ctx context.Context, job *worker.Job[int]) error { return nil })
			worker.Handle(w, "fail", func(ctx context.Context, job *worker.Job[int]) error { return errors.New("no such mailbox") })

			enqCtx, enqSpan := tel.tracer().Start(ctx, "enqueue")
			res, err := store.Enqueue(enqCtx, core.ItemSpec{Queue: "mail", Kind: "greet"}, core.ItemSpec{Queue: "mail", Kind: "fail", MaxAttempts: 1})
			enqSpan.End()
			if err != nil {
				t.Fatal(err)
			}
			loose, err := store.Enqueue(ctx, core.ItemSpec{Queue: "mail", Kind: "greet"})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer w.Stop(context.Background())
			spans := func() map[string]sdktrace.ReadOnlySpan {
				out := map[string]sdktrace.ReadOnlySpan{}
				for _, s := range tel.spans.Ended() {
					if id := itemOf(s); id != "" {
						out[id] = s
					}
				}
				return out
			}
			waitFor(t, "three handler spans", func() (bool, string) { n := len(spans()); return n == 3, fmt.Sprint(n) })
			got := spans()
			parent := enqSpan.SpanContext()
			for i, r := range res {
				s := got[r.ID.String()]
				if s.SpanContext().TraceID() != parent.TraceID() || s.Parent().SpanID() != parent.SpanID() {
					t.Errorf("item %d's span %s (trace %s, parent %s), want a child of the enqueue's span %s of trace %s",
						i, s.Name(), s.SpanContext().TraceID(), s.Parent().SpanID(), parent.SpanID(), parent.TraceID())
				}
				if !s.Parent().IsRemote() || s.SpanKind() != trace.SpanKindConsumer {
					t.Errorf("item %d's span: remote parent %v, kind %v, want a consumer span under a remote parent", i, s.Parent().IsRemote(), s.SpanKind())
				}
				want := map[attribute.Key]string{otelplenum.AttrQueue: "mail", otelplenum.AttrAttempt: "1", "messaging.system": "plenum"}
				for _, a := range s.Attributes() {
					if v, ok := want[a.Key]; ok && a.Value.Emit() == v {
						delete(want, a.Key)
					}
				}
				if len(want) > 0 {
					t.Errorf("item %d's span %v lacks %v", i, s.Attributes(), want)
				}
			}
			if s := got[res[0].ID.String()]; s.Name() != "process greet" || s.Status().Code == codes.Error {
				t.Errorf("greet's span %q, status %v", s.Name(), s.Status())
			}
			if s := got[res[1].ID.String()]; s.Name() != "process fail" || s.Status().Code != codes.Error || len(s.Events()) == 0 {
				t.Errorf("fail's span %q, status %v, %d events: want the error recorded", s.Name(), s.Status(), len(s.Events()))
			}
			if s := got[loose[0].ID.String()]; s.Parent().IsValid() || s.SpanContext().TraceID() == parent.TraceID() {
				t.Errorf("an item enqueued outside any span was handled under %v in trace %s, want a trace of its own", s.Parent(), s.SpanContext().TraceID())
			}

			// The metrics: the depth comes with the maintenance's
			// passes, the others with the items' events.
			var (
				m        map[string]metricdata.Metrics
				outcomes map[string]int64
			)
			waitFor(t, "every metric, and the three outcomes", func() (bool, string) {
				var rm metricdata.ResourceMetrics
				if err := tel.reader.Collect(ctx, &rm); err != nil {
					t.Fatal(err)
				}
				m = map[string]metricdata.Metrics{}
				for _, sm := range rm.ScopeMetrics {
					for _, x := range sm.Metrics {
						m[x.Name] = x
					}
				}
				outcomes = map[string]int64{}
				if sum, ok := m[otelplenum.MetricOutcomes].Data.(metricdata.Sum[int64]); ok {
					for _, p := range sum.DataPoints {
						o, _ := p.Attributes.Value(otelplenum.AttrOutcome)
						outcomes[o.AsString()] += p.Value
					}
				}
				return len(m) == 4 && outcomes["completed"]+outcomes["dead"] == 3, fmt.Sprintf("%d metrics, outcomes %v", len(m), outcomes)
			})
			if n := histogramCount(m[otelplenum.MetricClaimLatency]); n != 3 {
				t.Errorf("claim latency: %d observations, want 3", n)
			}
			if n := histogramCount(m[otelplenum.MetricHandlerDuration]); n != 3 {
				t.Errorf("handler duration: %d observations, want 3", n)
			}
			if fmt.Sprint(outcomes) != "map[completed:2 dead:1]" {
				t.Errorf("outcomes %v, want 2 completed and 1 dead", outcomes)
			}
			if pts := m[otelplenum.MetricQueueDepth].Data.(metricdata.Gauge[int64]).DataPoints; len(pts) == 0 {
				t.Error("no queue depth recorded")
			}
		})
	}
}

func histogramCount(m metricdata.Metrics) uint64 {
	h, ok := m.Data.(metricdata.Histogram[float64])
	if !ok {
		return 0
	}
	var n uint64
	for _, p := range h.DataPoints {
		n += p.Count
	}
	return n
}

// TestTrace_BatchSpanLinksEachItemsContext checks that a batch handler's
// call runs in one span with a link to the enqueuing span of each of its
// items, and with no parent when they came from different spans.
func TestTrace_BatchSpanLinksEachItemsContext(t *testing.T) {
	t.Parallel()
	for _, dbase := range databases {
		t.Run(dbase.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			tel, store, w := tracedWorker(t, dbase, "otelbatch_")
			worker.HandleBatch(w, "digest", func(ctx context.Context, jobs []*worker.Job[int]) error { return nil },
				worker.BatchConfig{MaxBatch: 2, MaxWait: 10 * time.Second})
			want := map[trace.SpanID]bool{}
			for range 2 {
				enqCtx, s := tel.tracer().Start(ctx, "enqueue")
				if _, err := store.Enqueue(enqCtx, core.ItemSpec{Queue: "mail", Kind: "digest"}); err != nil {
					t.Fatal(err)
				}
				s.End()
				want[s.SpanContext().SpanID()] = true
			}
			if err := w.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer w.Stop(context.Background())
			var batch sdktrace.ReadOnlySpan
			waitFor(t, "the batch's span", func() (bool, string) {
				for _, s := range tel.spans.Ended() {
					if s.Name() == "process digest" {
						batch = s
						return true, ""
					}
				}
				return false, fmt.Sprint(len(tel.spans.Ended()), " spans")
			})
			for _, l := range batch.Links() {
				delete(want, l.SpanContext.SpanID())
			}
			if len(want) > 0 || len(batch.Links()) != 2 {
				t.Errorf("the batch's span links %d spans, missing %v: want a link to each item's enqueuing span", len(batch.Links()), want)
			}
			if batch.Parent().IsValid() {
				t.Errorf("the batch's span has parent %v, want none: its items came from two spans", batch.Parent())
			}
		})
	}
}
