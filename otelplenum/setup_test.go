package otelplenum_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/otelplenum"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// database is one database the tests run on, opened by a DSN that a
// process started by the test can open too.
type database struct {
	name    string
	dialect dialect.Dialect
	open    func(dsn string) (*sql.DB, error)
	dsn     func(t *testing.T) string
}

// databases are SQLite (a file in the test's temporary directory),
// PostgreSQL and MySQL/MariaDB (where the environment names them: see
// conformance.DSN).
var databases = []database{
	{"sqlite", sqlite.Dialect(), sqlite.Open, func(t *testing.T) string { return filepath.Join(t.TempDir(), "otel.db") }},
	{"postgres", postgres.Dialect(), postgres.Open, func(t *testing.T) string { return conformance.DSN(t, "postgres") }},
	{"mysql", mysql.Dialect(), mysql.Open, func(t *testing.T) string { return conformance.DSN(t, "mysql") }},
}

func byName(name string) database {
	for _, d := range databases {
		if d.name == name {
			return d
		}
	}
	panic("no database " + name)
}

// testWait bounds a test's waits: generous, the machine may be loaded.
const testWait = 2 * time.Minute

// telemetry is a Telemetry whose spans go to an in-memory recorder and
// whose metrics a manual reader collects.
type telemetry struct {
	*otelplenum.Telemetry
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
}

func newTelemetry(t *testing.T, more ...sdktrace.TracerProviderOption) *telemetry {
	t.Helper()
	tel := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tel.tp = sdktrace.NewTracerProvider(append([]sdktrace.TracerProviderOption{sdktrace.WithSpanProcessor(tel.spans)}, more...)...)
	var err error
	tel.Telemetry, err = otelplenum.New(otelplenum.Config{
		TracerProvider: tel.tp,
		MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader)),
	})
	if err != nil {
		t.Fatal(err)
	}
	return tel
}

// tracer is the test's own tracer, for the spans that enqueue.
func (tel *telemetry) tracer() trace.Tracer { return tel.tp.Tracer("test") }

// openStore opens the store on db under prefix, with tel's enqueue hook.
func openStore(ctx context.Context, t *testing.T, db *sql.DB, d dialect.Dialect, prefix string, tel *otelplenum.Telemetry) *core.Store {
	t.Helper()
	store, err := core.Open(ctx, db, d, core.Options{Prefix: prefix, Migrate: true, OnEnqueue: tel.EnqueueHook()})
	if err != nil {
		t.Fatal(err)
	}
	return store
}

// tracedWorker opens dbase's store under prefix and a worker on it, on
// queue "mail" with 4 slots, both traced and measured by a new telemetry.
func tracedWorker(t *testing.T, dbase database, prefix string) (*telemetry, *core.Store, *worker.Worker) {
	t.Helper()
	db, err := dbase.open(dbase.dsn(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tel := newTelemetry(t)
	store := openStore(t.Context(), t, db, dbase.dialect, prefix, tel.Telemetry)
	w, err := worker.New(store, workerConfig(store, tel.Telemetry, "mail", 4))
	if err != nil {
		t.Fatal(err)
	}
	return tel, store, w
}

// workerConfig is a quick worker's, on queue with slots, traced and
// measured by tel.
func workerConfig(store *core.Store, tel *otelplenum.Telemetry, queue string, slots int) worker.Config {
	return worker.Config{
		Queues:            map[string]worker.QueueConfig{queue: {MaxWorkers: slots}},
		PollInterval:      20 * time.Millisecond,
		HeartbeatInterval: 400 * time.Millisecond,
		// Far above the heartbeat, so that a loaded machine's stalls
		// never make the worker's own reaper take its items back.
		StaleAfter:   30 * time.Second,
		ReapInterval: 200 * time.Millisecond,
		Middleware:   []worker.Middleware{tel.Middleware(store)},
		Hooks:        tel.Hooks(),
	}
}

// itemOf is the item id a handler's span names.
func itemOf(s sdktrace.ReadOnlySpan) string {
	for _, a := range s.Attributes() {
		if a.Key == otelplenum.AttrItemID {
			return a.Value.AsString()
		}
	}
	return ""
}

// waitFor polls cond until it holds, failing t after testWait with what
// cond last said it saw.
func waitFor(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for {
		ok, saw := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v (saw %s)", what, testWait, saw)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
