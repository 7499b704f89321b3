package pipeline

import (
	"context"
	"strings"
	"testing"
	"time"
)

func tick(context.Context, int, Repetition) (int, bool, error) { return 0, false, nil }

func TestDefine_RefusesBadRepeatOptions(t *testing.T) {
	t.Parallel()
	_, err := Define("p", Then(Then(Then(
		RepeatUntil[int, int]("no-body", nil, RepeatOptions{Every: time.Second}),
		RepeatUntil("no-every", tick, RepeatOptions{})),
		RepeatUntil("bad-end", tick, RepeatOptions{Every: time.Second, Until: -time.Second})),
		RepeatUntil("bad-rules", tick, RepeatOptions{Every: time.Second, CatchUp: 7, OnError: 9})))
	for _, want := range []string{
		"at p > no-body: the repeat's body is nil",
		"at p > no-every: RepeatOptions.Every is 0s: it must be above zero",
		"at p > bad-end: RepeatOptions.Until is negative",
		"at p > bad-rules: RepeatOptions.CatchUp is 7",
		"at p > bad-rules: RepeatOptions.OnError is 9",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error misses %q:\n%v", want, err)
		}
	}
	if _, err := Define("p", RepeatUntil("ok", tick, RepeatOptions{Every: time.Second})); err != nil {
		t.Errorf("a repeat every second: %v", err)
	}
}

// The catch-up rule: a repetition running 5½ intervals after the start
// stays itself under RunMissed, and under SkipToLatest gives its place
// to the latest one due, never one past the end.
func TestRepeatDue_CatchUpRule(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	first := repeatState{Index: 1, At: start.Add(time.Hour)}
	late := start.Add(5*time.Hour + 30*time.Minute)
	for _, c := range []struct {
		name   string
		n      node
		now    time.Time
		index  int
		missed int
		last   bool
	}{
		{"run missed", node{interval: time.Hour, catchUp: RunMissed}, late, 1, 0, false},
		{"skip to latest", node{interval: time.Hour, catchUp: SkipToLatest}, late, 5, 4, false},
		{"skip to latest, on time", node{interval: time.Hour, catchUp: SkipToLatest}, start.Add(90 * time.Minute), 1, 0, false},
		{"skip, capped at the end", node{interval: time.Hour, until: 3 * time.Hour, catchUp: SkipToLatest}, late, 3, 2, true},
		{"run missed past the end", node{interval: time.Hour, until: 3 * time.Hour}, late, 1, 0, false},
		{"the end's own", node{interval: time.Hour, until: time.Hour}, late, 1, 0, true},
	} {
		st, rep := c.n.due(first, c.now)
		want := start.Add(time.Duration(c.index) * time.Hour)
		if rep.Index != c.index || rep.Missed != c.missed || rep.Last != c.last || !rep.At.Equal(want) || st.Index != c.index || !st.At.Equal(want) {
			t.Errorf("%s: %+v (state %+v), want index %d due at %v, %d missed, last %v", c.name, rep, st, c.index, want, c.missed, c.last)
		}
	}
}
