package worker_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/wiretap"
	"github.com/plenumdb/plenum/sqlite"
	"github.com/plenumdb/plenum/worker"
)

// waitFor polls cond until it holds, failing the test after testWait.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %v for %s", testWait, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// startWorker starts w and stops it when the test ends.
func startWorker(t *testing.T, w *worker.Worker) {
	t.Helper()
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testWait)
		defer cancel()
		_ = w.Stop(ctx)
	})
}

// finished waits until item has finished and returns it.
func finished(t *testing.T, s *core.Store, item uuid.UUID) core.Item {
	t.Helper()
	var it core.Item
	waitFor(t, "item "+item.String()+" to finish", func() bool {
		var err error
		it, err = s.Get(t.Context(), item)
		return err == nil && (it.State == core.StateCompleted || it.State == core.StateDead)
	})
	return it
}

// TestProgress_CoalescedToOneWritePerInterval checks the rate limit of
// Job.SetProgress by counting the statements sent: a handler reports
// 100,000 times, and the worker writes the progress at most once per
// ProgressInterval (plus the last report, before the completion), the
// latest report winning.
func TestProgress_CoalescedToOneWritePerInterval(t *testing.T) {
	t.Parallel()
	var tap wiretap.Tap
	db := wiretap.Open(t, &tap, filepath.Join(t.TempDir(), "progress.db"))
	s, err := core.Open(t.Context(), db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	const (
		reports  = 100_000
		chunk    = 25_000
		interval = 100 * time.Millisecond
	)
	cfg := fast(map[string]int{"q": 1})
	cfg.ProgressInterval = interval
	w, err := worker.New(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var ran atomic.Int64 // the handler's running time, in nanoseconds
	w.HandleFunc("count", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		start := time.Now()
		defer func() { ran.Store(int64(time.Since(start))) }()
		for i := 1; i <= reports; i++ {
			if err := job.SetProgress(core.Progress{Done: int64(i), Total: reports, Output: json.RawMessage(`{"i":1}`)}); err != nil {
				return err
			}
			// At the end of each chunk but the last, the chunk's last
			// report is written while the handler runs.
			if i%chunk == 0 && i < reports {
				for {
					p, _, err := s.Progress(ctx, job.ID())
					if err != nil {
						return err
					}
					if p.Done == int64(i) {
						break
					}
					time.Sleep(time.Millisecond)
				}
			}
		}
		return nil
	})
	tap.Take()
	res, err := s.Enqueue(t.Context(), core.ItemSpec{Queue: "q", Kind: "count"})
	if err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	if it := finished(t, s, res[0].ID); it.State != core.StateCompleted {
		t.Fatalf("item ended %s: %s", it.State, it.LastError)
	}
	writes := 0
	for _, st := range tap.Take() {
		if q := strings.ToUpper(st.Query); strings.Contains(q, "PROGRESS SET") {
			writes++
		}
	}
	p, ok, err := s.Progress(t.Context(), res[0].ID)
	if err != nil || !ok || p.Done != reports || p.Total != reports {
		t.Fatalf("progress after the completion = %+v, %v, %v; want the last report, %d of %d", p, ok, err, reports, reports)
	}
	// One write per interval begun, and the last report: the bound is
	// counted from the handler's own running time, whatever it was.
	most := int(time.Duration(ran.Load())/interval) + 2
	if writes > most || writes < reports/chunk-1 {
		t.Fatalf("%d writes of the progress for %d reports in %v; want at least %d and at most %d (one per %v, and the last)",
			writes, reports, time.Duration(ran.Load()), reports/chunk-1, most, interval)
	}
	t.Logf("%d reports in %v: %d progress writes", reports, time.Duration(ran.Load()), writes)
}

// TestProgress_KeptForRetryAndWrittenWithOutcome checks, on every
// database, that a handler's last report is written before its outcome
// (with ProgressInterval far longer than the run, it is the only write),
// that a failed attempt's progress is what the next attempt reads, and
// that a report made just before Job.Fence commits with the fence.
func TestProgress_KeptForRetryAndWrittenWithOutcome(t *testing.T) {
	t.Parallel()
	for _, dbase := range databases {
		t.Run(dbase.Name, func(t *testing.T) {
			t.Parallel()
			s := poolStore(t, dbase)
			cfg := fast(map[string]int{"q": 2})
			cfg.ProgressInterval = time.Hour
			w, err := worker.New(s, cfg)
			if err != nil {
				t.Fatal(err)
			}
			seen := make(chan core.Progress, 1)
			w.HandleFunc("retry", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
				if job.Attempt() == 1 {
					for i := int64(1); i <= 3; i++ {
						if err := job.SetProgress(core.Progress{Done: i, Total: 10, Output: json.RawMessage(`{"rows":["a"]}`)}); err != nil {
							return err
						}
					}
					return errors.New("first attempt fails")
				}
				p, _, err := s.Progress(ctx, job.ID())
				if err != nil {
					return err
				}
				seen <- p
				return job.SetProgress(core.Progress{Done: 10, Total: 10})
			}, worker.KindConfig{Backoff: func(int) time.Duration { return 0 }})
			w.HandleFunc("fenced", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
				if err := job.SetProgress(core.Progress{Done: 1}); err != nil {
					return err
				}
				if err := job.SetProgress(core.Progress{Done: 2, Output: json.RawMessage(`"last"`)}); err != nil {
					return err
				}
				return job.Fence(ctx, func(ctx context.Context, f *core.Fenced) error { return nil })
			})
			res, err := s.Enqueue(t.Context(), core.ItemSpec{Queue: "q", Kind: "retry", MaxAttempts: 2}, core.ItemSpec{Queue: "q", Kind: "fenced"})
			if err != nil {
				t.Fatal(err)
			}
			startWorker(t, w)
			if it := finished(t, s, res[0].ID); it.State != core.StateCompleted || it.Attempt != 2 {
				t.Fatalf("retried item ended %s after attempt %d", it.State, it.Attempt)
			}
			if p := <-seen; p.Done != 3 || p.Attempt != 1 || !strings.Contains(string(p.Output), `"a"`) {
				t.Errorf("attempt 2 read %+v (output %s); want attempt 1's last report, 3 of 10", p, p.Output)
			}
			if p, ok, err := s.Progress(t.Context(), res[0].ID); err != nil || !ok || p.Done != 10 || p.Attempt != 2 {
				t.Errorf("retried item's progress = %+v, %v, %v; want attempt 2's 10 of 10", p, ok, err)
			}
			finished(t, s, res[1].ID)
			if p, ok, err := s.Progress(t.Context(), res[1].ID); err != nil || !ok || p.Done != 2 || string(p.Output) != `"last"` {
				t.Errorf("fenced item's progress = %+v, %v, %v; want the report before the fence", p, ok, err)
			}
		})
	}
}

// TestProgress_RefusedOutOfBounds checks that Job.SetProgress refuses a
// report out of bounds at once, with core's *InputError.
func TestProgress_RefusedOutOfBounds(t *testing.T) {
	t.Parallel()
	s := poolStore(t, databases[0])
	w, err := worker.New(s, fast(map[string]int{"q": 1}))
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	w.HandleFunc("k", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		got <- job.SetProgress(core.Progress{Output: json.RawMessage(strings.Repeat(" ", core.MaxProgressOutputBytes) + "1")})
		return nil
	})
	if _, err := s.Enqueue(t.Context(), core.ItemSpec{Queue: "q", Kind: "k"}); err != nil {
		t.Fatal(err)
	}
	startWorker(t, w)
	var bad *core.InputError
	if err := <-got; !errors.As(err, &bad) || !errors.Is(err, core.ErrInvalidInput) {
		t.Fatalf("SetProgress of %d bytes = %v, want a *core.InputError", core.MaxProgressOutputBytes+1, err)
	}
}
