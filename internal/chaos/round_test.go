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
	res, err := Run(ctx, Config{
		Dialect: "sqlite", DSN: filepath.Join(t.TempDir(), "chaos.db"),
		Workers: 3, Slots: 4, Duration: 15 * time.Second,
		Plan:    Plan{Chains: 10, ChainSteps: 5, Fanouts: 2, Children: 300, Page: 100, FailEvery: 5, TickEvery: time.Second},
		Faults:  Faults{KillEvery: 4 * time.Second, StallEvery: 6 * time.Second, Skewed: 1, Skew: 5 * time.Hour, Points: DefaultPoints()},
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
	_ = os.Stdout
}
