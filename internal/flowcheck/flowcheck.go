// Package flowcheck proves flow control's limits from what a test
// recorded of each run of a keyed item: when its claim began and ended on
// the database clock. It serves the killed-worker test of the concurrency
// limit (internal/testkit/crashtest) and the chaos harness's checker.
package flowcheck

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Run is one claim of a keyed item, from its claim to its end, as the
// database clock stamped them.
type Run struct {
	// Item names the item; Key is its flow key.
	Item, Key string
	// Start is when the claim began (the item's claimed_at), End when it
	// ended: the completion that ended it, or the record of the reaper
	// or of the failure that did.
	Start, End time.Time
}

// Overlap is a key's most runs under way at once, and when.
type Overlap struct {
	Key string
	N   int
	At  time.Time
}

// String says what o shows against limit.
func (o Overlap) String() string {
	return fmt.Sprintf("key %s had %d claims at once at %s", o.Key, o.N, o.At.UTC().Format(time.RFC3339Nano))
}

// Overlaps returns, key by key in key order, the most runs under way at
// once. At equal times an end counts before a start: a run's end is
// stamped before its claim ends, and the next claim's start after it
// began, so that a run handed on at once never counts twice.
func Overlaps(runs []Run) []Overlap {
	type event struct {
		at    time.Time
		delta int
	}
	byKey := map[string][]event{}
	for _, r := range runs {
		byKey[r.Key] = append(byKey[r.Key], event{r.Start, +1}, event{r.End, -1})
	}
	out := make([]Overlap, 0, len(byKey))
	for k, evs := range byKey {
		slices.SortFunc(evs, func(a, b event) int {
			if c := a.at.Compare(b.at); c != 0 {
				return c
			}
			return a.delta - b.delta
		})
		o := Overlap{Key: k}
		n := 0
		for _, e := range evs {
			n += e.delta
			if n > o.N {
				o.N, o.At = n, e.at
			}
		}
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b Overlap) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// Window is a key's most claims begun within one window of a rate's
// period, and where that window starts.
type Window struct {
	Key  string
	N    int
	From time.Time
	Per  time.Duration
}

// String says what w shows.
func (w Window) String() string {
	return fmt.Sprintf("key %s had %d claims within %v from %s", w.Key, w.N, w.Per, w.From.UTC().Format(time.RFC3339Nano))
}

// Windows returns, key by key in key order, the most runs that began
// within a window [t, t+per) of the database clock.
func Windows(runs []Run, per time.Duration) []Window {
	byKey := map[string][]time.Time{}
	for _, r := range runs {
		byKey[r.Key] = append(byKey[r.Key], r.Start)
	}
	out := make([]Window, 0, len(byKey))
	for k, ts := range byKey {
		slices.SortFunc(ts, time.Time.Compare)
		w := Window{Key: k, Per: per}
		j := 0
		for i, t := range ts {
			for j < len(ts) && ts[j].Before(t.Add(per)) {
				j++
			}
			if n := j - i; n > w.N {
				w.N, w.From = n, t
			}
		}
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b Window) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// EndOf returns the end of a run that began at start and left no record
// of its own end: the earliest of ends (the recorded ends of the item's
// claims: the reaper's, a failure's) not before start, and false when
// there is none. Any earlier claim of the item ended before this one
// began, so the first end after its start is its own.
func EndOf(start time.Time, ends []time.Time) (time.Time, bool) {
	var e time.Time
	for _, x := range ends {
		if !x.Before(start) && (e.IsZero() || x.Before(e)) {
			e = x
		}
	}
	return e, !e.IsZero()
}
