package chaos

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/plenumdb/plenum/internal/testkit/privatedb"
)

// Failover kinds (Faults.Failover).
const (
	// FailoverSync fails over to a synchronous standby: nothing
	// acknowledged may be lost.
	FailoverSync = "sync"
	// FailoverAsync fails over to an asynchronous standby: completions
	// the standby had not received are lost and run again (at least
	// once), each with its fenced effect.
	FailoverAsync = "async"
)

// Event is one fault of the network or the server: when it began
// (since the round's start), how long it lasted, and what it was.
type Event struct {
	At, Took time.Duration
	What     string
}

func (e Event) String() string {
	return fmt.Sprintf("%s at %.1fs (%.1fs)", e.What, e.At.Seconds(), e.Took.Seconds())
}

// partition cuts the namespaces of some worker slots off from the
// server, silently, for a while, then heals them. The partitions come in
// turns of three: one worker for Faults.Partition (past the stale
// threshold: its claims are reaped and finished by others, its late
// writes fenced), one worker for half the stale threshold (nothing may
// be reaped), and every worker but one for Faults.Partition (every
// worker reaps, so this cuts the reapers off too, and the one left
// reaps them all). Slots already cut off are left out.
// cut holds the slots cut off now; r.mu guards it.
func (r *round) partition(ctx context.Context, wg *sync.WaitGroup, cut map[int]bool) {
	pv := r.pv
	r.mu.Lock()
	turn := len(r.res.Partitions) % 3
	var free []int
	for slot := range pv.ns {
		if !cut[slot] {
			free = append(free, slot)
		}
	}
	r.mu.Unlock()
	if len(free) == 0 {
		return
	}
	r.rnd.Shuffle(len(free), func(i, j int) { free[i], free[j] = free[j], free[i] })
	slots, long := free[:1], r.cfg.Faults.Partition
	switch turn {
	case 1:
		long = r.cfg.Timing.StaleAfter / 2
	case 2:
		if len(pv.ns) > 1 {
			slots = free[:max(1, min(len(free), len(pv.ns)-1))]
		}
	}
	sort.Ints(slots)
	r.mu.Lock()
	for _, s := range slots {
		cut[s] = true
	}
	r.mu.Unlock()
	what := fmt.Sprintf("workers %v cut off", slots)
	if turn == 1 {
		what += " (shorter than the stale threshold)"
	}
	r.count(func(res *Result) { res.Partitions = append(res.Partitions, Event{What: what}) })
	// The cut, the partition and the heal run beside the other faults:
	// nft takes a while on a loaded machine.
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer func() {
			r.mu.Lock()
			for _, s := range slots {
				delete(cut, s)
			}
			r.mu.Unlock()
		}()
		for _, s := range slots {
			if err := pv.ns[s].Cut(); err != nil {
				r.logf("partition: %v", err)
				for _, s := range slots {
					_ = pv.ns[s].Heal()
				}
				r.setPartition(what, 0, 0, err)
				return
			}
		}
		at := time.Since(r.start)
		r.logf("partition: %s for %v", what, long)
		sleep(context.WithoutCancel(ctx), long)
		var herr error
		for _, s := range slots {
			herr = errors.Join(herr, pv.ns[s].Heal())
		}
		if herr != nil {
			r.logf("heal: %v", herr)
		}
		r.setPartition(what, at, time.Since(r.start)-at, herr)
		r.logf("healed workers %v", slots)
	}()
}

// setPartition records when the partition what began and how long it
// lasted, or that it failed.
func (r *round) setPartition(what string, at, took time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.res.Partitions {
		if e := &r.res.Partitions[i]; e.What == what && e.At == 0 && e.Took == 0 {
			e.At, e.Took = at, took
			if err != nil {
				e.What += " (failed: " + err.Error() + ")"
			}
			return
		}
	}
}

// restart restarts the server, by a fast and an immediate shutdown in
// turn, and returns once it answers again.
func (r *round) restart() {
	pv := r.pv
	pv.mu.Lock()
	defer pv.mu.Unlock()
	r.mu.Lock()
	mode := privatedb.Fast
	if len(r.res.Restarts)%2 == 1 {
		mode = privatedb.Immediate
	}
	r.mu.Unlock()
	at := time.Since(r.start)
	err := pv.server.Restart(mode)
	ev := Event{At: at, Took: time.Since(r.start) - at, What: mode.String() + " restart"}
	if err != nil {
		ev.What += " (failed: " + err.Error() + ")"
		r.logf("restart: %v", err)
	}
	r.logf("%s", ev)
	r.count(func(res *Result) { res.Restarts = append(res.Restarts, ev) })
}

// failoverLag is how long a failover's standby stops receiving before
// its primary is killed: the primary acknowledges (async) or holds
// (sync) the commits of that while.
const failoverLag = 2 * time.Second

// failover has the standby stop receiving (a standby fallen behind),
// lets the run go on for failoverLag, kills the primary (an immediate
// shutdown) and promotes the standby, which the workers' DSN names after
// the primary. Later restarts restart the promoted standby.
func (r *round) failover(ctx context.Context) {
	pv := r.pv
	pv.mu.Lock()
	defer pv.mu.Unlock()
	at := time.Since(r.start)
	what := r.cfg.Faults.Failover + " failover"
	fail := func(err error) {
		r.logf("failover: %v", err)
		r.count(func(res *Result) {
			res.Failovers = append(res.Failovers, Event{At: at, Took: time.Since(r.start) - at, What: what + " (failed: " + err.Error() + ")"})
		})
	}
	if err := pv.standby.Detach(pv.server); err != nil {
		fail(err)
		return
	}
	sleep(ctx, failoverLag)
	r.mu.Lock()
	r.killedAt = time.Now()
	r.mu.Unlock()
	if err := pv.server.Stop(privatedb.Immediate); err != nil {
		fail(err)
		return
	}
	if err := pv.standby.Promote(); err != nil {
		fail(err)
		return
	}
	r.mu.Lock()
	r.promotedAt = time.Now()
	r.mu.Unlock()
	pv.server, pv.standby = pv.standby, nil
	ev := Event{At: at, Took: time.Since(r.start) - at, What: what}
	r.logf("%s: the standby stopped receiving, %v later the primary was killed and the standby promoted", ev, failoverLag)
	r.count(func(res *Result) { res.Failovers = append(res.Failovers, ev); r.reseed = true })
}

// events lists evs, or "none".
func events(evs []Event) string {
	if len(evs) == 0 {
		return "none"
	}
	s := make([]string, len(evs))
	for i, e := range evs {
		s[i] = e.String()
	}
	return strings.Join(s, "; ")
}
