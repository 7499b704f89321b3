package chaos

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A short round on SQLite: kills, stalls and a skewed clock, then the
// check passes.
func TestRound_SQLiteFindsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("a round takes half a minute")
	}
	var log strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// Faults come at exponential intervals: with means of 4 s and 6 s a
	// round of 15 s went without a stall about one time in ten; with means
	// of 2 s one goes without a kill or a stall about one time in a
	// thousand.
	res, err := Run(ctx, Config{
		Dialect: "sqlite", DSN: filepath.Join(t.TempDir(), "chaos.db"),
		Workers: 3, Slots: 4, Duration: 15 * time.Second,
		Plan: Plan{Chains: 10, ChainSteps: 5, Fanouts: 2, Children: 300, Page: 100, FailEvery: 5, TickEvery: time.Second,
			FlowKeys: 6, FlowItems: 10, FlowLimit: 2, RateKeys: 2, RateItems: 5, Rate: 2, RatePer: 2 * time.Second, RateBurst: 2},
		Faults:  Faults{KillEvery: 2 * time.Second, StallEvery: 2 * time.Second, Skewed: 1, Skew: 5 * time.Hour, Points: DefaultPoints()},
		Command: selfCommand, Log: &log,
	})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, log.String())
	}
	res.Print(&log)
	t.Log(log.String())
	if !res.OK() {
		t.Fatal("the round found violations")
	}
	if res.Killed == 0 || res.Stalls == 0 {
		t.Errorf("%d kills and %d stalls: the round inflicted too little", res.Killed, res.Stalls)
	}
	if f := res.Findings; f.FlowPeak < 2 || f.RatePeak < 2 {
		t.Errorf("most claims of a key at once %d, most begun within a rate's period %d: the keyed items did not press against their limits", f.FlowPeak, f.RatePeak)
	}
	_ = os.Stdout
}
