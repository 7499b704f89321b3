package worker

import (
	"fmt"
	"strings"

	"github.com/plenumdb/plenum/core"
)

// MinOpenConns returns the fewest connections the pool of store's *sql.DB
// must be allowed to open at once (db.SetMaxOpenConns) for a worker
// configured by cfg, which New refuses less than: every connection the
// worker may hold at the same moment, its heartbeat's included. With
// fewer, handlers inside their fences could hold every connection while
// the heartbeat waited for one, and the worker would be taken for dead
// (and stop itself) although it was alive.
//
// It counts one connection per handler (a handler holds one inside
// Job.Fence, or while its failure or release is recorded), one per
// queue's claim loop, the heartbeat, the completer's batches in flight
// (two), the check of running claims, the maintenance loop (unless
// ReapInterval is negative), the periodic loop (if Periodic is set) and
// the listener for wake-ups (unless PollOnly, where the store listens:
// core.Store.Notifies). It counts this worker alone: two workers on one
// *sql.DB, or a worker and the application's own calls, need the sum.
func MinOpenConns(store *core.Store, cfg Config) int {
	return total(connNeeds(store, cfg.withDefaults()))
}

// connNeed is one part of a worker's connections: n of them, held by
// what.
type connNeed struct {
	n    int
	what string
}

// connNeeds lists what a worker with cfg (defaults applied) may hold at
// once.
func connNeeds(store *core.Store, cfg Config) []connNeed {
	handlers := 0
	for _, q := range cfg.Queues {
		handlers += q.MaxWorkers
	}
	needs := []connNeed{
		{handlers, "handlers (one each, inside a fence)"},
		{len(cfg.Queues), "claim loops (one per queue)"},
		{1, "heartbeat"},
		{completeFlights, "completion batches in flight"},
		{1, "check of running claims"},
	}
	if cfg.ReapInterval > 0 {
		needs = append(needs, connNeed{1, "maintenance (reaper and retention)"})
	}
	if (len(cfg.Periodic) > 0 || cfg.StoredSchedules) && cfg.PeriodicInterval > 0 {
		needs = append(needs, connNeed{1, "periodic schedules"})
	}
	if !cfg.PollOnly && store.Notifies() {
		needs = append(needs, connNeed{1, "listener for wake-ups"})
	}
	return needs
}

// total adds the parts up.
func total(needs []connNeed) int {
	n := 0
	for _, c := range needs {
		n += c.n
	}
	return n
}

// checkPool refuses a store whose pool is bounded below what a worker
// with cfg (defaults applied) needs. An unbounded pool (0) is accepted.
func checkPool(store *core.Store, cfg Config) error {
	limit := store.DB().Stats().MaxOpenConnections
	needs := connNeeds(store, cfg)
	need := total(needs)
	if limit <= 0 || limit >= need {
		return nil
	}
	parts := make([]string, len(needs))
	for i, c := range needs {
		parts[i] = fmt.Sprintf("%d %s", c.n, c.what)
	}
	return configErr("store", "its *sql.DB opens at most %d connections at once (db.SetMaxOpenConns), and this worker may hold %d: %s; with fewer, fences holding every connection would keep the heartbeat waiting and the worker would be taken for dead: allow %d or more (0: no bound), or lower the queues' MaxWorkers",
		limit, need, strings.Join(parts, ", "), need)
}

// FitPool raises the bound on the open connections of store's *sql.DB, if
// it has one (db.SetMaxOpenConns), to what workers configured by cfgs need
// together (the sum of their MinOpenConns), and returns the bound then in
// force (0: none). It never lowers a bound, nor sets one where there is
// none. Call it before New, for a process that sizes its pool to the
// workers it runs on it; the server must accept that many connections
// from it.
func FitPool(store *core.Store, cfgs ...Config) int {
	need := 0
	for _, cfg := range cfgs {
		need += MinOpenConns(store, cfg)
	}
	db := store.DB()
	limit := db.Stats().MaxOpenConnections
	if limit > 0 && limit < need {
		db.SetMaxOpenConns(need)
		limit = need
	}
	return limit
}
