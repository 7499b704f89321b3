package promhooks_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/examples/promhooks"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// sample reads one series from reg: a counter's or gauge's value, a
// histogram's sample count; 0 for a series that does not exist.
func sample(t *testing.T, reg prometheus.Gatherer, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metrics:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if len(got) != len(want) {
				continue
			}
			for k, v := range want {
				if got[k] != v {
					continue metrics
				}
			}
			return value(m)
		}
	}
	return 0
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return 0
}

// TestHooks_CountWhatARealWorkerDid runs a worker on SQLite through every
// outcome, a fan-in and a reaped crash, then reads the registry and checks
// each number against what happened.
func TestHooks_CountWhatARealWorkerDid(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "jobs.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	store, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	const q = "q"
	// A process whose clock reads an hour ago claims one item: its owner
	// is stale at once, so the worker's reaper counts a crash and gives
	// the item back, for the worker to complete.
	past, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{ClockOffset: -time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := past.Enqueue(ctx, core.ItemSpec{Queue: q, Kind: "ok"}); err != nil {
		t.Fatal(err)
	}
	stranger, err := past.RegisterOwner(ctx, core.RegisterOwnerParams{Host: "gone"})
	if err != nil {
		t.Fatal(err)
	}
	if cs, err := past.Claim(ctx, core.ClaimParams{Queue: q, Owner: stranger, Limit: 1, Lease: time.Minute}); err != nil || len(cs) != 1 {
		t.Fatalf("stranger's claim: %d items, %v", len(cs), err)
	}
	specs := []core.ItemSpec{
		{Queue: q, Kind: "ok"}, {Queue: q, Kind: "ok"}, {Queue: q, Kind: "ok"},
		{Queue: q, Kind: "flaky"}, {Queue: q, Kind: "bad"}, {Queue: q, Kind: "snooze"},
		{Queue: q, Kind: "fan", Payload: json.RawMessage(`2`)},
	}
	if _, err := store.Enqueue(ctx, specs...); err != nil {
		t.Fatal(err)
	}

	reg := prometheus.NewRegistry()
	hooks, err := promhooks.New(reg, promhooks.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := worker.New(store, worker.Config{
		Queues:            map[string]worker.QueueConfig{q: {MaxWorkers: 4}},
		PollInterval:      20 * time.Millisecond,
		HeartbeatInterval: 300 * time.Millisecond,
		StaleAfter:        3 * time.Second,
		ReapInterval:      200 * time.Millisecond,
		RetainFor:         -1,
		Hooks:             hooks,
	})
	if err != nil {
		t.Fatal(err)
	}
	var flakyRuns, snoozeRuns atomic.Int32
	ok := func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		time.Sleep(2 * time.Millisecond)
		return nil
	}
	w.HandleFunc("ok", ok)
	w.HandleFunc("child", ok)
	w.HandleFunc("join", ok)
	w.HandleFunc("flaky", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		if flakyRuns.Add(1) == 1 {
			return errors.New("first attempt fails")
		}
		return nil
	}, worker.KindConfig{Backoff: func(int) time.Duration { return 10 * time.Millisecond }})
	w.HandleFunc("bad", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		return worker.Discard(errors.New("never works"))
	})
	w.HandleFunc("snooze", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		if snoozeRuns.Add(1) == 1 {
			return worker.Snooze(10 * time.Millisecond)
		}
		return nil
	})
	worker.Handle(w, "fan", func(ctx context.Context, job *worker.Job[int]) error {
		var kids []core.ChildSpec
		for i := range job.Args {
			kids = append(kids, core.ChildSpec{Key: fmt.Sprint(i), Kind: "child"})
		}
		_, err := store.Expand(ctx, job.Claim(), core.ExpandParams{
			Barrier: core.BarrierSpec{Name: "fan", Join: core.JoinSpec{Queue: q, Kind: "join"}},
			Next: func(context.Context, string) (core.ChildPage, error) {
				return core.ChildPage{Children: kids, Done: true}, nil
			},
			CompleteParent: true,
		})
		return err
	})
	if err := w.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer w.Stop(context.Background())

	// 4 ok (one after the crash), flaky, snooze, fan, 2 children, the join.
	const completed = 10
	deadline := time.Now().Add(30 * time.Second)
	for sample(t, reg, "plenum_queue_depth", "queue", q, "state", "completed") != completed ||
		sample(t, reg, "plenum_queue_depth", "queue", q, "state", "dead") != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the depth gauge never read %d completed and 1 dead:\n%s", completed, dump(t, reg))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := w.Stop(ctx); err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"plenum_worker_claimed_total", []string{"queue", q, "kind", "ok"}, 4},
		{"plenum_worker_claimed_total", []string{"queue", q, "kind", "flaky"}, 2},
		{"plenum_worker_claimed_total", []string{"queue", q, "kind", "snooze"}, 2},
		{"plenum_worker_started_total", []string{"queue", q, "kind", "child"}, 2},
		{"plenum_worker_outcomes_total", []string{"queue", q, "kind", "ok", "outcome", "completed"}, 4},
		{"plenum_worker_outcomes_total", []string{"queue", q, "kind", "flaky", "outcome", "failed"}, 1},
		{"plenum_worker_outcomes_total", []string{"queue", q, "kind", "flaky", "outcome", "completed"}, 1},
		{"plenum_worker_outcomes_total", []string{"queue", q, "kind", "bad", "outcome", "dead"}, 1},
		{"plenum_worker_outcomes_total", []string{"queue", q, "kind", "snooze", "outcome", "snoozed"}, 1},
		{"plenum_worker_outcomes_total", []string{"queue", q, "kind", "snooze", "outcome", "completed"}, 1},
		{"plenum_worker_outcomes_total", []string{"queue", q, "kind", "fan", "outcome", "completed"}, 1},
		{"plenum_worker_outcomes_total", []string{"queue", q, "kind", "join", "outcome", "completed"}, 1},
		{"plenum_worker_handler_duration_seconds", []string{"queue", q, "kind", "ok", "outcome", "completed"}, 4},
		{"plenum_worker_handler_duration_seconds", []string{"queue", q, "kind", "child", "outcome", "completed"}, 2},
		{"plenum_reaper_total", []string{"result", "owners_removed"}, 1},
		{"plenum_reaper_total", []string{"result", "crashed"}, 1},
		{"plenum_reaper_total", []string{"result", "timed_out"}, 0},
		{"plenum_barriers_fired_total", []string{"queue", q, "join", "available"}, 1},
		{"plenum_barriers_fired_total", []string{"queue", q, "join", "dead"}, 0},
		{"plenum_queue_depth", []string{"queue", q, "state", "available"}, 0},
		{"plenum_queue_depth", []string{"queue", q, "state", "claimed"}, 0},
	} {
		if got := sample(t, reg, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if t.Failed() {
		t.Log(dump(t, reg))
	}
}

func TestNew_RefusesATakenName(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := promhooks.New(reg, promhooks.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := promhooks.New(reg, promhooks.Options{}); err == nil {
		t.Fatal("a second New on the same registry succeeded")
	}
	// A failed New leaves nothing behind: another namespace registers.
	if _, err := promhooks.New(reg, promhooks.Options{Namespace: "other"}); err != nil {
		t.Fatal(err)
	}
}

// dump lists every series, for failure messages.
func dump(t *testing.T, reg prometheus.Gatherer) string {
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			lines = append(lines, fmt.Sprintf("%s{%s} %v", mf.GetName(), strings.Join(ls, ","), value(m)))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
