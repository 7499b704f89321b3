package worker_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/testdb"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/worker"
)

// poolStore opens a store on new tables of dbase, dropped at the end.
func poolStore(t *testing.T, dbase testdb.Database) *core.Store {
	t.Helper()
	db := dbase.Open(t)
	prefix := fmt.Sprintf("wpool%08x_", rand.Uint32())
	st, err := core.Open(t.Context(), db, dbase.Dialect, core.Options{Prefix: prefix, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := migrations.Drop(ctx, db, dbase.Dialect, prefix); err != nil {
			t.Errorf("drop tables %s*: %v", prefix, err)
		}
	})
	return st
}

// TestNew_RefusesPoolTooSmall checks that New refuses a store whose pool
// is bounded below what the worker may hold at once (its handlers, claim
// loops, heartbeat, completer, watcher, maintenance, periodic loop and
// listener), with an error naming both numbers, and accepts that bound or
// none.
func TestNew_RefusesPoolTooSmall(t *testing.T) {
	t.Parallel()
	for _, dbase := range databases {
		t.Run(dbase.Name, func(t *testing.T) {
			t.Parallel()
			st := poolStore(t, dbase)
			db := st.DB()
			cfg := worker.Config{Queues: map[string]worker.QueueConfig{"a": {MaxWorkers: 3}, "b": {MaxWorkers: 2}}}
			listener := 0
			if st.Notifies() {
				listener = 1
			}
			// 5 handlers, 2 claim loops, the heartbeat, 2 completion
			// batches, the watcher, maintenance.
			want := 5 + 2 + 1 + 2 + 1 + 1 + listener
			need := worker.MinOpenConns(st, cfg)
			if need != want {
				t.Fatalf("MinOpenConns = %d, want %d", need, want)
			}
			for _, tc := range []struct {
				name string
				cfg  worker.Config
				want int
			}{
				{"poll only", worker.Config{Queues: cfg.Queues, PollOnly: true}, want - listener},
				{"no reaper", worker.Config{Queues: cfg.Queues, ReapInterval: -1}, want - 1},
				{"periodic", worker.Config{Queues: cfg.Queues, Periodic: []worker.PeriodicJob{{Name: "p", Every: time.Minute, Item: core.ItemSpec{Queue: "a"}}}}, want + 1},
			} {
				if got := worker.MinOpenConns(st, tc.cfg); got != tc.want {
					t.Errorf("%s: MinOpenConns = %d, want %d", tc.name, got, tc.want)
				}
			}

			db.SetMaxOpenConns(need - 1)
			_, err := worker.New(st, cfg)
			var ce *worker.ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("New on a pool of %d, %d needed: %v, want a *ConfigError", need-1, need, err)
			}
			for _, s := range []string{fmt.Sprintf("at most %d connections", need-1), fmt.Sprintf("may hold %d:", need), "5 handlers", "1 heartbeat"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("New's error %q does not say %q", err, s)
				}
			}
			for _, limit := range []int{need, 0} {
				db.SetMaxOpenConns(limit)
				if _, err := worker.New(st, cfg); err != nil {
					t.Errorf("New on a pool of %d, %d needed: %v", limit, need, err)
				}
			}
		})
	}
}

// TestFitPool checks that FitPool raises a bound below what its workers
// need together to that sum, and leaves a higher bound, or none, alone.
func TestFitPool(t *testing.T) {
	t.Parallel()
	st := poolStore(t, databases[0])
	db := st.DB()
	cfg := worker.Config{Queues: map[string]worker.QueueConfig{"a": {MaxWorkers: 40}}}
	need := 2 * worker.MinOpenConns(st, cfg)
	for _, tc := range []struct{ limit, want int }{{5, need}, {need + 10, need + 10}, {0, 0}} {
		db.SetMaxOpenConns(tc.limit)
		if got := worker.FitPool(st, cfg, cfg); got != tc.want {
			t.Errorf("FitPool on a pool of %d = %d, want %d", tc.limit, got, tc.want)
		}
		if got := db.Stats().MaxOpenConnections; got != tc.want {
			t.Errorf("FitPool on a pool of %d left a bound of %d, want %d", tc.limit, got, tc.want)
		}
	}
}
