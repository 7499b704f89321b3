package worker_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/worker"
)

// BenchmarkRuntime_Drain drains b.N items with no-op handlers through one
// worker of 100 slots: the runtime's cost per item, allocations included
// (-benchmem). SQLite by default; PLENUM_BENCH_DIALECT=postgres or mysql
// runs it on that database's DSN from the environment. A measurement,
// never a pass/fail on timing.
func BenchmarkRuntime_Drain(b *testing.B) {
	dbase := databases[0]
	for _, d := range databases {
		if d.Name == os.Getenv("PLENUM_BENCH_DIALECT") {
			dbase = d
		}
	}
	ctx := context.Background()
	db := dbase.Open(b)
	prefix := "wbench_" + strings.ReplaceAll(uuid.NewString()[:8], "-", "") + "_"
	st, err := core.Open(ctx, db, dbase.Dialect, core.Options{Prefix: prefix, Migrate: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = migrations.Drop(context.Background(), db, dbase.Dialect, prefix) })
	specs := make([]core.ItemSpec, 0, 1000)
	for n := 0; n < b.N; {
		specs = specs[:0]
		for ; n < b.N && len(specs) < cap(specs); n++ {
			specs = append(specs, core.ItemSpec{Queue: "bench", Kind: "bench"})
		}
		if _, err := st.Enqueue(ctx, specs...); err != nil {
			b.Fatal(err)
		}
	}
	var done atomic.Int64
	all := make(chan struct{})
	cfg := worker.Config{
		Queues:       map[string]worker.QueueConfig{"bench": {MaxWorkers: 100}},
		PollInterval: 10 * time.Millisecond,
		ReapInterval: -1,
		Hooks: worker.HookFunc(func(_ context.Context, e worker.Event) {
			if e.Kind == worker.EventCompleted && done.Add(1) == int64(b.N) {
				close(all)
			}
		}),
	}
	worker.FitPool(st, cfg)
	w, err := worker.New(st, cfg)
	if err != nil {
		b.Fatal(err)
	}
	w.HandleFunc("bench", func(context.Context, *worker.Job[json.RawMessage]) error { return nil })
	b.ReportAllocs()
	b.ResetTimer()
	if err := w.Start(ctx); err != nil {
		b.Fatal(err)
	}
	<-all
	b.StopTimer()
	if err := w.Stop(ctx); err != nil {
		b.Fatal(err)
	}
}
