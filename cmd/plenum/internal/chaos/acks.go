package chaos

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The acknowledgements are the evidence a round keeps outside the
// database: a worker writes one line (ackLine) for each completion
// whose fence returned nil, the completion it saw committed. The audit
// rows prove that no unit was done twice in what the database kept; the
// acknowledgements prove that nothing acknowledged was lost from it. A
// failover to an asynchronous standby loses the completions the standby
// had not received, which then run again: such a unit is acknowledged
// twice, once before the failover and once after it, and that, in that
// mode only, is the documented at-least-once delivery, counted as a
// re-run, not a violation.

// ackPrefix starts an acknowledgement's line.
const ackPrefix = "acked "

// writeAck writes the acknowledgement of unit, stamped with the wall
// clock (not the skewed application clock).
func writeAck(w io.Writer, unit string) {
	if w != nil {
		fmt.Fprintf(w, "%s%s %d\n", ackPrefix, unit, time.Now().UnixNano())
	}
}

// acks collects the acknowledgements of a round's workers.
type acks struct {
	mu sync.Mutex
	at map[string][]int64 // by unit, wall clock in nanoseconds
}

// add records one acknowledgement line; it reports whether line was one.
func (a *acks) add(line string) bool {
	rest, ok := strings.CutPrefix(line, ackPrefix)
	if !ok {
		return false
	}
	unit, ns, ok := strings.Cut(rest, " ")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.at == nil {
		a.at = map[string][]int64{}
	}
	a.at[unit] = append(a.at[unit], n)
	return true
}

// judge counts the acknowledgements and adds a violation of
// InvExactlyOnce to f for each unit acknowledged more than once, except
// where lossy (a failover to an asynchronous standby happened: the
// primary was killed at killed, the standby promoted at promoted) and
// the unit was acknowledged twice, first before the promotion ended and
// then after the kill: that is a re-run.
func (a *acks) judge(f *Findings, lossy bool, killed, promoted time.Time) (acked, reruns int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	bad := 0
	units := make([]string, 0, len(a.at))
	for u := range a.at {
		units = append(units, u)
	}
	sort.Strings(units)
	for _, u := range units {
		ts := a.at[u]
		acked += int64(len(ts))
		if len(ts) < 2 {
			continue
		}
		sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
		if lossy && len(ts) == 2 && ts[0] < promoted.UnixNano() && ts[1] > killed.UnixNano() {
			reruns++
			continue
		}
		when := make([]string, len(ts))
		for i, t := range ts {
			when[i] = time.Unix(0, t).UTC().Format("15:04:05.000")
		}
		bad++
		if bad <= maxExamples {
			f.Violations = append(f.Violations, Violation{Invariant: InvExactlyOnce,
				Detail: fmt.Sprintf("%s acknowledged %d times (at %s): an acknowledged completion was lost, or a unit done twice", u, len(ts), strings.Join(when, ", "))})
		}
	}
	if bad > maxExamples {
		f.Violations = append(f.Violations, Violation{Invariant: InvExactlyOnce, Detail: fmt.Sprintf("... and %d more units acknowledged more than once", bad-maxExamples)})
	}
	return acked, reruns
}
