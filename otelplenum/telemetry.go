package otelplenum

import (
	"fmt"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the tracer and meter.
const ScopeName = "github.com/plenumdb/plenum/otelplenum"

// Config configures a Telemetry. Every field is optional.
type Config struct {
	// TracerProvider makes the handlers' spans. Default: the global one
	// (otel.GetTracerProvider).
	TracerProvider trace.TracerProvider
	// MeterProvider makes the instruments. Default: the global one
	// (otel.GetMeterProvider).
	MeterProvider metric.MeterProvider
	// Propagator writes the enqueuing context into an item's metadata and
	// reads it back. Default: propagation.TraceContext, the W3C
	// traceparent and tracestate entries. A propagator whose entries break
	// the store's rules for metadata (their number, length or characters)
	// makes the enqueue fail, naming the entry.
	Propagator propagation.TextMapPropagator
}

// Telemetry makes the hooks, middleware and instruments of one
// configuration. It is safe for concurrent use.
type Telemetry struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	m      instruments
}

// New returns the Telemetry of cfg, its instruments created.
func New(cfg Config) (*Telemetry, error) {
	if cfg.TracerProvider == nil {
		cfg.TracerProvider = otel.GetTracerProvider()
	}
	if cfg.MeterProvider == nil {
		cfg.MeterProvider = otel.GetMeterProvider()
	}
	if cfg.Propagator == nil {
		cfg.Propagator = propagation.TraceContext{}
	}
	t := &Telemetry{
		tracer: cfg.TracerProvider.Tracer(ScopeName),
		prop:   cfg.Propagator,
	}
	m, err := newInstruments(cfg.MeterProvider.Meter(ScopeName))
	if err != nil {
		return nil, fmt.Errorf("otelplenum: instruments: %w", err)
	}
	t.m = m
	return t, nil
}
