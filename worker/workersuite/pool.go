package workersuite

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/stoptest"
	"github.com/plenumdb/plenum/worker"
)

// heartbeatWhileFencesHoldThePool runs a worker on the smallest pool New
// accepts (worker.MinOpenConns) with every handler blocked inside its
// fence, each holding a connection: the heartbeat must still go through
// for longer than StaleAfter, and a reaper must find nobody stale. Where
// the dialect has a single writer (SQLite) it does not apply: a fence
// holds the database's one write lock, which a heartbeat waits for
// whatever the pool.
func heartbeatWhileFencesHoldThePool(e *env) {
	t := e.t
	if e.d.Capabilities().SingleWriter {
		t.Skip("a fence holds the single writer's lock, which every heartbeat waits for")
	}
	const q, slots = "fenced", 3
	cfg := e.fast(map[string]int{q: slots})
	need := worker.MinOpenConns(e.store, cfg)
	e.db.SetMaxOpenConns(need)
	// The test's own reads go through a handle of their own: the worker's
	// pool is meant to be full.
	obs := e.observer()

	var entered sync.WaitGroup
	entered.Add(slots)
	var mu sync.Mutex
	seen := map[uuid.UUID]bool{}
	release := make(chan struct{})
	w := e.start(cfg, func(w *worker.Worker) {
		w.HandleFunc("hold", func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
			return job.Fence(ctx, func(ctx context.Context, f *core.Fenced) error {
				// fn may run again on a retry: count each item once.
				mu.Lock()
				first := !seen[job.ID()]
				seen[job.ID()] = true
				mu.Unlock()
				if first {
					entered.Done()
				}
				select {
				case <-release:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			})
		})
	})
	specs := make([]core.ItemSpec, slots)
	for i := range specs {
		specs[i] = core.ItemSpec{Queue: q, Kind: "hold"}
	}
	ids := e.enqueue(specs...)
	inside := make(chan struct{})
	go func() { entered.Wait(); close(inside) }()
	stoptest.Await(t, inside, time.Minute, "handler inside each fence")
	if got := e.db.Stats().InUse; got < slots {
		t.Fatalf("%d connections in use with %d handlers inside their fences", got, slots)
	}

	// Every handler holds its fence: the heartbeat must go on past a whole
	// StaleAfter from now, on the database clock.
	from, err := obs.Now(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := from.Add(cfg.StaleAfter)
	bound := time.Now().Add(cfg.StaleAfter + time.Minute)
	for {
		last := ownerHeartbeat(e, obs, w)
		if last.After(want) {
			break
		}
		if err := w.Err(); err != nil {
			t.Fatalf("the worker stopped itself on a pool of %d with %d handlers inside their fences: %v", need, slots, err)
		}
		if time.Now().After(bound) {
			stoptest.Stuck(t, "on a pool of %d with %d handlers inside their fences, the last heartbeat is %v, not past %v (StaleAfter after they entered)", need, slots, last, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
	r, err := obs.Reap(e.ctx, core.ReapParams{StaleAfter: cfg.StaleAfter})
	if err != nil {
		t.Fatal(err)
	}
	if r.OwnersRemoved != 0 || r.Crashed != 0 {
		t.Fatalf("a reaper took the live worker for dead: %+v", r)
	}

	close(release)
	e.waitFor(time.Minute, "completed", func(it core.Item) bool { return it.State == core.StateCompleted }, ids...)
	if err := w.Err(); err != nil {
		t.Fatalf("worker: %v", err)
	}
}

// ownerHeartbeat returns w's last heartbeat as obs reads it, failing the
// test if w has no owner row.
func ownerHeartbeat(e *env, obs *core.Store, w *worker.Worker) time.Time {
	e.t.Helper()
	owners, err := browse.New(obs).Owners(e.ctx, browse.OwnersParams{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, o := range owners {
		if o.ID == w.Owner() {
			return o.LastHeartbeatAt
		}
	}
	e.t.Fatalf("owner %s is gone: it was reaped", w.Owner())
	return time.Time{}
}
