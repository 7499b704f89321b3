package chaos

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestAcks_ReRunOnlyAcrossAnAsyncFailover checks the judgement of the
// acknowledgements: a unit acknowledged twice, before a failover to an
// asynchronous standby and after it, is a re-run there and a violation
// anywhere else, and two acknowledgements on the same side of the
// failover, or three, are violations in every mode.
func TestAcks_ReRunOnlyAcrossAnAsyncFailover(t *testing.T) {
	base := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	killed, promoted := base.Add(10*time.Second), base.Add(12*time.Second)
	at := func(sec float64) int64 { return base.Add(time.Duration(sec * float64(time.Second))).UnixNano() }
	var a acks
	for _, l := range []struct {
		unit string
		at   []int64
	}{
		{"step/1/1", []int64{at(1)}},                 // once
		{"step/1/2", []int64{at(9.5), at(15)}},       // before the kill, after the promotion: lost, run again
		{"step/1/3", []int64{at(11), at(13)}},        // committed between the kill and the promotion's end, then again
		{"step/1/4", []int64{at(3), at(5)}},          // twice before the failover
		{"step/1/5", []int64{at(14), at(16)}},        // twice after it
		{"step/1/6", []int64{at(2), at(14), at(15)}}, // three times
	} {
		for _, ns := range l.at {
			if !a.add(fmt.Sprintf("acked %s %d", l.unit, ns)) {
				t.Fatalf("the line of %s was not read as an acknowledgement", l.unit)
			}
		}
	}
	if a.add("lost 7f8e: reaped") || a.add("acked step/1/1 soon") {
		t.Fatal("a line that is no acknowledgement was read as one")
	}
	for _, c := range []struct {
		name   string
		lossy  bool
		reruns int64
		bad    []string
	}{
		{"async failover", true, 2, []string{"step/1/4 ", "step/1/5 ", "step/1/6 "}},
		{"any other round", false, 0, []string{"step/1/2 ", "step/1/3 ", "step/1/4 ", "step/1/5 ", "step/1/6 "}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &Findings{}
			acked, reruns := a.judge(f, c.lossy, killed, promoted)
			if acked != 12 || reruns != c.reruns {
				t.Errorf("%d acknowledged, %d re-runs; want 12 and %d", acked, reruns, c.reruns)
			}
			if len(f.Violations) != len(c.bad) {
				t.Fatalf("%d violations, want %d: %v", len(f.Violations), len(c.bad), f.Violations)
			}
			for i, v := range f.Violations {
				if v.Invariant != InvExactlyOnce || !strings.HasPrefix(v.Detail, c.bad[i]) {
					t.Errorf("violation %d is %v, want one of %s's completions", i, v, c.bad[i])
				}
			}
		})
	}
}
