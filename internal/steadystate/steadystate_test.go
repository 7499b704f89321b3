package steadystate

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// The histogram's quantiles are the values added, within its precision
// (exact below 1,024 µs, 0.2% above).
func TestHist_Quantiles(t *testing.T) {
	t.Parallel()
	var h Hist
	for us := int64(1); us <= 10_000; us++ {
		h.Add(time.Duration(us) * time.Microsecond)
	}
	h.Add(5 * time.Second)
	qs, n := h.Quantiles(0.001, 0.5, 0.99, 1)
	if n != 10_001 {
		t.Fatalf("%d values, want 10,001", n)
	}
	for i, want := range []time.Duration{11 * time.Microsecond, 5001 * time.Microsecond, 9901 * time.Microsecond, 5 * time.Second} {
		if d := qs[i] - want; d < -want/500 || d > want/500 {
			t.Errorf("quantile %d: %v, want %v within 0.2%%", i, qs[i], want)
		}
	}
	if _, n := new(Hist).Quantiles(0.5); n != 0 {
		t.Errorf("an empty histogram counts %d", n)
	}
}

func TestWindows(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		measure time.Duration
		n       int
		win     time.Duration
	}{{3 * time.Minute, 36, 5 * time.Second}, {time.Second, 1, time.Second}, {12 * time.Second, 2, 6 * time.Second}} {
		n, win := Windows(tc.measure)
		if n != tc.n || win != tc.win {
			t.Errorf("%v: %d windows of %v, want %d of %v", tc.measure, n, win, tc.n, tc.win)
		}
	}
}

func TestMedian(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := Median(tc.xs); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}

// A round on an in-memory side inserts, picks up and completes jobs, and
// reports one rate per window and the pickups measured.
func TestRun_InMemorySide(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	m := &Meter{}
	jobs := make(chan int64, 2*Depth)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case stamp := <-jobs:
					m.Start(stamp)
					m.Complete()
				}
			}
		})
	}
	r, err := Run(ctx, func(ctx context.Context, n int, stamp int64) error {
		for range n {
			select {
			case jobs <- stamp:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}, m, 0, 20*time.Millisecond)
	cancel()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Windows) != 1 || r.Rate <= 0 || r.Pickups == 0 || r.P99 < r.P50 {
		t.Errorf("round %+v: want one window, a rate, pickups, and p99 >= p50", r)
	}
}

// A producer that fails ends the round with its error.
func TestRun_ProducerFails(t *testing.T) {
	t.Parallel()
	_, err := Run(t.Context(), func(context.Context, int, int64) error { return errors.New("refused") }, &Meter{}, time.Hour, time.Hour)
	if err == nil || !strings.Contains(err.Error(), "producer: refused") {
		t.Errorf("error %v, want the producer's", err)
	}
}
