package otelplenum_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/crashtest"
	"github.com/plenumdb/plenum/otelplenum"
	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/worker"
)

// The environment that makes the test binary the second process.
const (
	envDB     = "OTELPLENUM_TEST_DB"
	envDSN    = "OTELPLENUM_TEST_DSN"
	envPrefix = "OTELPLENUM_TEST_PREFIX"
	envDir    = "OTELPLENUM_TEST_DIR"
)

const fanQueue = "pipelines"

// fanPipeline is a step, then a fan-out over two elements whose each
// step holds until each of two processes has started one, then their
// collapse (the join). dir holds a file per process that started one.
func fanPipeline(dir string) (*pipeline.Pipeline[int, int], error) {
	first := pipeline.Step("first", func(_ context.Context, n int) (int, error) { return n, nil })
	each := pipeline.Step("each", func(ctx context.Context, n int) (int, error) {
		mark := filepath.Join(dir, fmt.Sprint(os.Getpid()))
		if err := os.WriteFile(mark, nil, 0o600); err != nil {
			return 0, err
		}
		// Each process has one slot: the other child can only run in
		// the other process.
		for {
			started, err := os.ReadDir(dir)
			if err != nil {
				return 0, err
			}
			if len(started) >= 2 {
				return n * 10, nil
			}
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-time.After(10 * time.Millisecond):
			}
		}
	})
	list := func(_ context.Context, n int) ([]int, error) { return []int{n, n + 1}, nil }
	sum := func(ctx context.Context, r *pipeline.Results[int]) (int, error) {
		total := 0
		err := r.Each(ctx, func(x pipeline.Result[int]) error { total += x.Value; return nil })
		return total, err
	}
	return pipeline.Define("fan", pipeline.Then(first, pipeline.Expand("spread", list, each, sum)))
}

// startFanWorker starts a worker with one slot running fanPipeline.
func startFanWorker(ctx context.Context, store *core.Store, tel *otelplenum.Telemetry, dir string) (*worker.Worker, *pipeline.Engine, *pipeline.Pipeline[int, int], error) {
	w, err := worker.New(store, workerConfig(store, tel, fanQueue, 1))
	if err != nil {
		return nil, nil, nil, err
	}
	eng, err := pipeline.New(store, w, pipeline.EngineOptions{Queue: fanQueue})
	if err != nil {
		return nil, nil, nil, err
	}
	p, err := fanPipeline(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := eng.Register(p); err != nil {
		return nil, nil, nil, err
	}
	return w, eng, p, w.Start(ctx)
}

// lineExporter writes each span it exports as a line on stdout, for the
// test process to read: "span <trace> <span> <parent> <item> <name>".
type lineExporter struct{ mu sync.Mutex }

func (e *lineExporter) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range spans {
		fmt.Printf("span %s %s %s %s %s\n", s.SpanContext().TraceID(), s.SpanContext().SpanID(), s.Parent().SpanID(), itemOf(s), s.Name())
	}
	return nil
}

func (e *lineExporter) Shutdown(context.Context) error { return nil }

// fanChild is the second process: a worker running fanPipeline whose
// spans go to stdout, until it is killed.
func fanChild(t *testing.T) {
	ctx := context.Background()
	dbase := byName(os.Getenv(envDB))
	db, err := dbase.open(os.Getenv(envDSN))
	if err != nil {
		t.Fatal(err)
	}
	tel := newTelemetry(t, sdktrace.WithSpanProcessor(sdktrace.NewSimpleSpanProcessor(&lineExporter{})))
	store := openStore(ctx, t, db, dbase.dialect, os.Getenv(envPrefix), tel.Telemetry)
	if _, _, _, err := startFanWorker(ctx, store, tel.Telemetry, os.Getenv(envDir)); err != nil {
		t.Fatal(err)
	}
	fmt.Println("ready")
	select {}
}

// span is a handler's span as either process saw it.
type span struct {
	trace, id, parent, item, name string
	child                         bool // ended in the second process
}

// TestTrace_CrossesFanOutIntoTwoProcesses runs a pipeline whose fan-out's
// two children run in two processes (this one and the test binary run
// again), triggered inside a span, and checks that every item's span is
// in that span's trace: the first step under the trigger, each step under
// the step that enqueued it, both children under the step that fanned
// out, though they ran in different processes, and the join (the
// collapse) under that same step.
func TestTrace_CrossesFanOutIntoTwoProcesses(t *testing.T) {
	if os.Getenv(envDB) != "" {
		fanChild(t)
		return
	}
	t.Parallel()
	for _, dbase := range databases {
		t.Run(dbase.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			dsn := dbase.dsn(t)
			db, err := dbase.open(dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			prefix := "otelfan" + strings.ReplaceAll(uuid.NewString()[:8], "-", "") + "_"
			dir := t.TempDir()
			tel := newTelemetry(t)
			store := openStore(ctx, t, db, dbase.dialect, prefix, tel.Telemetry)
			proc := crashtest.Start(t, "TestTrace_CrossesFanOutIntoTwoProcesses",
				envDB+"="+dbase.name, envDSN+"="+dsn, envPrefix+"="+prefix, envDir+"="+dir)
			proc.Await(t, testWait, "ready", func(line string) bool { return line == "ready" })
			w, eng, p, err := startFanWorker(ctx, store, tel.Telemetry, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop(context.Background())

			trigCtx, trig := tel.tracer().Start(ctx, "trigger")
			run, err := p.Trigger(trigCtx, eng, 1)
			trig.End()
			if err != nil {
				t.Fatal(err)
			}
			r, err := eng.Wait(ctx, run)
			if err != nil || r.State != pipeline.StateCompleted || string(r.Output) != "30" {
				t.Fatalf("run %v: %s %s, want completed with 30", err, r.State, r.Output)
			}
			items, err := store.RunItems(ctx, core.RunItemsParams{Run: run, Limit: 100})
			if err != nil {
				t.Fatal(err)
			}

			// Every item's span, from this process's recorder and the
			// other's lines: a span ends before its item's outcome is
			// written, so the run's end means every span has ended.
			spans := map[string]span{}
			for _, s := range tel.spans.Ended() {
				if id := itemOf(s); id != "" {
					spans[id] = span{s.SpanContext().TraceID().String(), s.SpanContext().SpanID().String(), s.Parent().SpanID().String(), id, s.Name(), false}
				}
			}
			if len(spans) < len(items) {
				proc.Await(t, testWait, "the spans of the items it ran", func(line string) bool {
					f := strings.SplitN(line, " ", 6)
					if len(f) == 6 && f[0] == "span" && f[4] != "" {
						spans[f[4]] = span{f[1], f[2], f[3], f[4], f[5], true}
					}
					return len(spans) >= len(items)
				})
			}
			bySpan := map[string]span{}
			for _, s := range spans {
				bySpan[s.id] = s
			}
			root := trig.SpanContext()
			var join core.Item
			for _, it := range items {
				s, ok := spans[it.ID.String()]
				if !ok {
					t.Fatalf("item %s (%s) has no span", it.ID, it.Kind)
				}
				if s.trace != root.TraceID().String() {
					t.Errorf("item %s's span %q is in trace %s, want the trigger's %s", it.ID, s.name, s.trace, root.TraceID())
				}
				if _, ok := bySpan[s.parent]; !ok && s.parent != root.SpanID().String() {
					t.Errorf("item %s's span %q has parent %s, neither the trigger's span nor another item's", it.ID, s.name, s.parent)
				}
				if it.JoinOf != uuid.Nil {
					join = it
				}
			}
			if join.ID == uuid.Nil {
				t.Fatal("the run has no join item")
			}
			var kids []span
			for _, it := range items {
				if it.BarrierID == join.JoinOf {
					kids = append(kids, spans[it.ID.String()])
				}
			}
			if len(kids) != 2 || kids[0].child == kids[1].child {
				t.Fatalf("children's spans %+v, want two, one from each process", kids)
			}
			fan := bySpan[kids[0].parent]
			if fan.id == "" || kids[1].parent != fan.id {
				t.Errorf("children's parents %s and %s, want both the span of the step that fanned out", kids[0].parent, kids[1].parent)
			}
			if j := spans[join.ID.String()]; j.parent != fan.id {
				t.Errorf("the join's span has parent %s, want the fan-out step's %s", j.parent, fan.id)
			}
			if first := bySpan[fan.parent]; first.parent != root.SpanID().String() {
				t.Errorf("the fan-out step's parent %q has parent %s, want the first step under the trigger %s", first.name, first.parent, root.SpanID())
			}
		})
	}
}
