package worker

import (
	"testing"
	"time"
)

// TestWaitBeforeClaim_GathersSlotsIntoBatches checks the claim loop's
// decision for a queue of 8 slots (a claim of 2 is worth it), polling
// every second: it claims a quarter of its slots or more at once, waits
// for fewer up to a poll interval, counted from when it began waiting,
// and for none without bound; it waits up to landWait for the slots of
// landing completions only while its slots fit one completion batch and
// not all of them are free; and a wake-up ends a wait for more slots.
func TestWaitBeforeClaim_GathersSlotsIntoBatches(t *testing.T) {
	t.Parallel()
	const poll, land = time.Second, 50 * time.Millisecond
	small := newBatching(QueueConfig{MaxWorkers: 8}, Config{CompleteBatch: 8, PollInterval: poll}, land)
	large := newBatching(QueueConfig{MaxWorkers: 8}, Config{CompleteBatch: 7, PollInterval: poll}, land)
	for _, tc := range []struct {
		name    string
		b       batching
		free    int
		landing int64
		woken   bool
		waited  time.Duration
		wait    bool
		upTo    time.Duration
	}{
		{"no slot free", small, 0, 0, false, 0, true, 0},
		{"no slot free, woken, waited long", small, 0, 3, true, time.Hour, true, 0},
		{"every slot free", small, 8, 0, false, 0, false, 0},
		{"a quarter free", small, 2, 0, false, 0, false, 0},
		{"less than a quarter free", small, 1, 0, false, 0, true, poll},
		{"less than a quarter, waited a while", small, 1, 0, false, 300 * time.Millisecond, true, 700 * time.Millisecond},
		{"less than a quarter, waited a poll interval", small, 1, 0, false, poll, false, 0},
		{"less than a quarter, woken", small, 1, 0, true, 0, false, 0},
		{"slots landing", small, 4, 2, false, 0, true, land},
		{"slots landing, waited a while", small, 4, 2, false, 20 * time.Millisecond, true, 30 * time.Millisecond},
		{"slots landing, waited landWait", small, 4, 2, false, land, false, 0},
		{"slots landing, woken", small, 4, 2, true, 0, false, 0},
		{"slots landing, every slot free", small, 8, 2, false, 0, false, 0},
		{"slots landing, more slots than a batch", large, 4, 2, false, 0, false, 0},
		{"less than a quarter, more slots than a batch", large, 1, 2, false, 0, true, poll},
	} {
		wait, upTo := tc.b.waitBeforeClaim(tc.free, tc.landing, tc.woken, tc.waited)
		if wait != tc.wait || upTo != tc.upTo {
			t.Errorf("%s: waitBeforeClaim(free %d, landing %d, woken %v, waited %v) = %v, %v; want %v, %v",
				tc.name, tc.free, tc.landing, tc.woken, tc.waited, wait, upTo, tc.wait, tc.upTo)
		}
	}
}
