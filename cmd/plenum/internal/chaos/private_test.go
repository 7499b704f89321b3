package chaos

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/internal/testkit/privatedb"
)

// TestRound_ServerFaultsFindNothing runs a short round of each fault of
// the network and the server, on private servers: workers partitioned
// from PostgreSQL and from MariaDB (one, one briefly, all but one) while
// the server restarts, fast and immediately in turn, with a failover to
// a synchronous standby on PostgreSQL; and a failover to an asynchronous
// standby. The workers reconnect by themselves, and the check finds
// nothing: after the asynchronous failover, the completions it lost ran
// again and are counted as re-runs, not violations. Skipped where no
// private server can be started (not root, no ip or nft, no servers),
// failed there where PLENUM_REQUIRE lists "private".
//
// The three rounds run at once, whatever -parallel says: they wait on
// servers, partitions and processes far more than on the processor.
// The faults come at random intervals: restarts every second on average
// (a restart takes one to several seconds, and none starts while a
// failover is due), so that a round without one is all but impossible.
func TestRound_ServerFaultsFindNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("the rounds take about a minute")
	}
	t.Parallel()
	rounds := []struct {
		name, dialect string
		faults        Faults
		res           *Result
		err           error
		log           strings.Builder
	}{
		{name: "postgres partitions, restarts and a sync failover", dialect: "postgres",
			faults: Faults{PartitionEvery: 2 * time.Second, RestartEvery: time.Second, Failover: FailoverSync, Points: DefaultPoints()}},
		{name: "mariadb partitions and restarts", dialect: "mysql",
			faults: Faults{PartitionEvery: 2 * time.Second, RestartEvery: time.Second, Points: DefaultPoints()}},
		{name: "postgres async failover", dialect: "postgres",
			faults: Faults{Failover: FailoverAsync, KillEvery: 4 * time.Second}},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for i := range rounds {
		c := &rounds[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.res, c.err = Run(ctx, Config{
				Dialect: c.dialect, Private: true,
				Workers: 3, Slots: 4, Duration: 15 * time.Second,
				Plan:    Plan{Chains: 10, ChainSteps: 5, Fanouts: 1, Children: 200, Page: 50, FailEvery: 5, TickEvery: time.Second},
				Faults:  c.faults,
				Command: selfCommand, Log: &c.log,
			})
		}()
	}
	wg.Wait()
	for i := range rounds {
		c := &rounds[i]
		t.Run(c.name, func(t *testing.T) {
			if errors.Is(c.err, ErrNoPrivateServer) && !conformance.Required(privatedb.Require) {
				t.Skip(c.err)
			}
			if c.err != nil {
				t.Fatalf("Run: %v\n%s", c.err, c.log.String())
			}
			res := c.res
			res.Print(&c.log)
			t.Log(c.log.String())
			if !res.OK() {
				t.Fatal("the round found violations")
			}
			f := c.faults
			if f.PartitionEvery > 0 && (len(res.Partitions) == 0 || len(res.Restarts) == 0) {
				t.Errorf("%d partitions and %d restarts: the round inflicted too little", len(res.Partitions), len(res.Restarts))
			}
			if f.Failover != "" && len(res.Failovers) != 1 {
				t.Errorf("%d failovers, want 1", len(res.Failovers))
			}
			if f.Failover != FailoverAsync && res.ReRuns != 0 {
				t.Errorf("%d re-runs counted without a failover to an asynchronous standby", res.ReRuns)
			}
			for _, e := range append(append(res.Partitions, res.Restarts...), res.Failovers...) {
				if strings.Contains(e.What, "failed") {
					t.Errorf("a fault could not be inflicted: %v", e)
				}
			}
			if res.Exits > 0 {
				t.Errorf("%d workers ended on an error of their own (see the log)", res.Exits)
			}
		})
	}
}
