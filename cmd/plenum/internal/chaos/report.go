package chaos

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// Print writes what the round did and what the check found.
func (r *Result) Print(w io.Writer) {
	fmt.Fprintf(w, "\nChaos round on %s (tables %s*, seed %d)\n", r.Dialect, r.Prefix, r.Seed)
	fmt.Fprintf(w, "  workers        %d processes of %d handlers at once; %d processes started in all\n", r.Workers, r.Slots, r.Processes)
	fmt.Fprintf(w, "  phases         faults %s, drain %s%s, check %s\n", secs(r.Faulted), secs(r.Drained), map[bool]string{true: " (timed out)"}[r.DrainTimedOut], secs(r.Checked))
	p := r.Plan
	fmt.Fprintf(w, "  workload       %d generation(s) of %d chains of %d steps, %d fan-outs of %d children and %d keyed items on %d keys: %d units, %d items\n",
		p.gens(), p.Chains, p.ChainSteps, p.Fanouts, p.Children, p.flowUnits(), p.FlowKeys+p.RateKeys, p.Units(), p.Items())
	fmt.Fprintln(w, "What it did:")
	fmt.Fprintf(w, "  killed         %d by SIGKILL, %d at injection points, %d other exits\n", r.Killed, r.PointKills, r.Exits)
	if len(r.Fired) > 0 {
		var pts []string
		for p := range r.Fired {
			pts = append(pts, p)
		}
		sort.Strings(pts)
		var s []string
		for _, p := range pts {
			s = append(s, fmt.Sprintf("%s %d", p, r.Fired[p]))
		}
		fmt.Fprintf(w, "  at points      %s\n", strings.Join(s, ", "))
	}
	fmt.Fprintf(w, "  connections    %d sessions dropped in %d attempts\n", r.Dropped, r.DropRounds)
	fmt.Fprintf(w, "  stalls         %d SIGSTOPs, %s paused in all; %d owners found themselves reaped and were replaced\n", r.Stalls, secs(r.Stalled), r.OwnersLost)
	if len(r.Partitions)+len(r.Restarts)+len(r.Failovers) > 0 {
		fmt.Fprintf(w, "  partitions     %d: %s\n", len(r.Partitions), events(r.Partitions))
		fmt.Fprintf(w, "  restarts       %d: %s\n", len(r.Restarts), events(r.Restarts))
		fmt.Fprintf(w, "  failovers      %d: %s\n", len(r.Failovers), events(r.Failovers))
	}
	if len(r.Skewed) > 0 {
		fmt.Fprintf(w, "  clock skew     slots %v with the application clock %v off (alternately ahead and behind)\n", r.Skewed, r.Skew)
	} else {
		fmt.Fprintln(w, "  clock skew     none")
	}
	f := r.Findings
	if f == nil {
		fmt.Fprintln(w, "No check ran.")
		return
	}
	fmt.Fprintln(w, "What it found:")
	var states []string
	for _, s := range f.sortedStates() {
		states = append(states, fmt.Sprintf("%d %s", f.Items[s], s))
	}
	fmt.Fprintf(w, "  items          %s\n", strings.Join(states, ", "))
	if p.Batched {
		fmt.Fprintf(w, "  units          %d of %d audited, %d periodic ticks; %d planned failures retried; %d children completed in batches (proven by their barriers)\n",
			f.Units, p.Units()-int64(p.fanouts())*int64(p.Children), f.Ticks, f.Retried, f.Children)
	} else {
		fmt.Fprintf(w, "  units          %d of %d audited, %d periodic ticks; %d planned failures retried\n", f.Units, p.Units(), f.Ticks, f.Retried)
	}
	fmt.Fprintf(w, "  barriers       %d, %d fired\n", f.Barriers, f.Fired)
	if p.FlowKeys > 0 || p.RateKeys > 0 {
		fmt.Fprintf(w, "  flow control   %d runs of keyed items audited (%d without a recorded end, left out); most claims of a key at once %d (audit), %d (sampled), limit %d; most begun within %v %d, rate %d plus burst %d\n",
			f.FlowRuns, f.Unended, f.FlowPeak, r.SampledPeak, p.FlowLimit, p.RatePer, f.RatePeak, p.Rate, p.flowBurst())
	}
	fmt.Fprintf(w, "  history        %d crashes counted on items; attempts ended %s\n", f.Crashes, outcomes(f.History))
	fmt.Fprintf(w, "  acknowledged   %d completions seen committed by the workers; %d units acknowledged twice across an asynchronous failover (re-runs)\n", r.Acked, r.ReRuns)
	if len(r.Skewed) > 0 {
		var n int64
		for _, s := range r.Skewed {
			n += f.ByWorker[s]
		}
		fmt.Fprintf(w, "  skewed work    %d units completed by the skewed slots\n", n)
	}
	if f.OK() {
		fmt.Fprintln(w, "PASS: no item lost, none completed twice, every barrier fired once with every child seen, no claim held by a dead owner, crash and attempt counts add up, no key over its concurrency or rate limit")
		if r.ReRuns > 0 {
			fmt.Fprintf(w, "  (at least once: the asynchronous failover lost %d acknowledged completions, which ran again, each with its fenced effect once in the database; in any other mode that is a violation)\n", r.ReRuns)
		}
		return
	}
	fmt.Fprintf(w, "FAIL: %d violations (tables kept for inspection)\n", len(f.Violations))
	for _, v := range f.Violations {
		fmt.Fprintf(w, "  [%s] %s\n", v.Invariant, v.Detail)
	}
}

func secs(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

func outcomes(h map[string]int64) string {
	if len(h) == 0 {
		return "never otherwise"
	}
	var ks []string
	for k := range h {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var s []string
	for _, k := range ks {
		s = append(s, fmt.Sprintf("%d %s", h[k], k))
	}
	return strings.Join(s, ", ")
}
