package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"slices"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
	"github.com/plenumdb/plenum/worker"
)

// latencyPoll is the poll interval of the pickup measurements' workers:
// short, so that polling alone is measured in a few seconds, and long
// enough against the wake-ups' milliseconds to tell them apart.
const latencyPoll = 100 * time.Millisecond

// latencyRow is the pickup latency of one way of finding new items: from
// just before Store.Enqueue of one item to the start of its handler on an
// idle worker.
type latencyRow struct {
	Name     string
	N        int
	P50, P99 time.Duration
}

// pickupMode is how the measured worker learns of the item.
type pickupMode struct {
	name string
	// pollOnly runs the worker without wake-ups.
	pollOnly bool
	// other enqueues through a second store on the same tables, as
	// another process would: only the dialect's notifier can wake the
	// worker then.
	other bool
	// flowKey, if set, is the items' flow key.
	flowKey string
}

// benchLatency measures the pickup latency of n single enqueues, each to
// an idle worker, woken in-process, woken by the dialect's notifier (where
// it has one) and by polling alone, and prints the section to w.
func benchLatency(ctx context.Context, w io.Writer, st *core.Store, n int) ([]latencyRow, error) {
	modes := []pickupMode{{name: "woken in-process"}}
	_, notifies := st.Dialect().(dialect.Notifier)
	if notifies {
		modes = append(modes, pickupMode{name: "woken by NOTIFY", other: true})
	}
	modes = append(modes, pickupMode{name: "polling only", pollOnly: true})

	fmt.Fprintf(w, "\npickup latency: enqueue to handler start, %s, one at a time to an idle worker polling every %v\n",
		cmdline.Plural(n, "item"), latencyPoll)
	fmt.Fprintf(w, "  %-16s %14s %14s\n", "", "p50", "p99")
	var rows []latencyRow
	for i, m := range modes {
		took, err := pickups(ctx, st, fmt.Sprintf("bench.pickup.%d", i), n, m)
		if err != nil {
			return rows, fmt.Errorf("bench: pickup latency (%s): %w", m.name, err)
		}
		row := latencyRowOf(m.name, took)
		rows = append(rows, row)
		fmt.Fprintf(w, "  %-16s %14s %14s\n", row.Name, ms(row.P50), ms(row.P99))
	}
	if !notifies {
		fmt.Fprintf(w, "  (%s has no notifier: items from other processes are found by polling)\n", st.Dialect().Name())
	}
	return rows, nil
}

// pickups runs one worker on queue in mode m and returns, for each of n
// items enqueued one at a time once the worker is idle, the time from
// before its enqueue to its handler's start.
func pickups(ctx context.Context, st *core.Store, queue string, n int, m pickupMode) ([]time.Duration, error) {
	started := make(chan time.Time, 1)
	completed := make(chan struct{}, 1)
	wk, err := worker.New(st, worker.Config{
		Queues:       map[string]worker.QueueConfig{queue: {MaxWorkers: 4}},
		PollInterval: latencyPoll,
		PollOnly:     m.pollOnly,
		ReapInterval: -1,
		Hooks: worker.HookFunc(func(_ context.Context, e worker.Event) {
			if e.Kind == worker.EventCompleted {
				completed <- struct{}{}
			}
		}),
	})
	if err != nil {
		return nil, err
	}
	wk.HandleFunc("pickup", func(context.Context, *worker.Job[json.RawMessage]) error {
		started <- time.Now()
		return nil
	})
	enqueuer := st
	listens := st.Stats().Listens
	if m.other {
		if enqueuer, err = core.Open(ctx, st.DB(), st.Dialect(), core.Options{Prefix: st.Prefix()}); err != nil {
			return nil, err
		}
	}
	if err := wk.Start(ctx); err != nil {
		return nil, err
	}
	defer func() { _ = wk.Stop(context.WithoutCancel(ctx)) }()
	if m.other {
		// Notifications sent before the listener listens are lost.
		for st.Stats().Listens == listens {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(time.Millisecond):
			}
		}
	}
	took := make([]time.Duration, 0, n)
	for range n {
		// Idle: its last claim found nothing, and the poll's phase is
		// random against the enqueue.
		pause := 5*time.Millisecond + time.Duration(mrand.Int64N(int64(latencyPoll)))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(pause):
		}
		before := time.Now()
		if _, err := enqueuer.Enqueue(ctx, core.ItemSpec{Queue: queue, Kind: "pickup", FlowKey: m.flowKey}); err != nil {
			return nil, err
		}
		timeout := time.After(time.Minute)
		select {
		case at := <-started:
			took = append(took, at.Sub(before))
		case <-timeout:
			return nil, fmt.Errorf("an item was not picked up within a minute")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		select {
		case <-completed:
		case <-timeout:
			return nil, fmt.Errorf("an item was not completed within a minute")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return took, wk.Stop(ctx)
}

// latencyRowOf is the row name of the latencies took, which it sorts.
func latencyRowOf(name string, took []time.Duration) latencyRow {
	slices.Sort(took)
	return latencyRow{Name: name, N: len(took), P50: percentile(took, 50), P99: percentile(took, 99)}
}

// percentile returns the p-th percentile of sorted (nearest rank).
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// ms formats d in milliseconds, to a hundredth below ten.
func ms(d time.Duration) string {
	v := float64(d) / float64(time.Millisecond)
	if v < 10 {
		return fmt.Sprintf("%.2f ms", v)
	}
	return fmt.Sprintf("%.0f ms", v)
}
