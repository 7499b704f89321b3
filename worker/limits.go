package worker

import "github.com/plenumdb/plenum/core"

// claimLimits are the attempt limits of the registered kinds that set one
// (their KindConfig.MaxAttempts, or DefaultKind's), for every claim to
// store on the items it takes: nil where none does, or where more kinds
// do than one claim carries (core.MaxClaimKinds), which leaves the stored
// limits the enqueue's while the worker still dead-letters at its own.
// The caller holds w.mu.
func (w *Worker) claimLimits() map[string]int {
	out := map[string]int{}
	for kind, h := range w.handlers {
		if h.cfg.MaxAttempts > 0 {
			out[kind] = min(h.cfg.MaxAttempts, core.MaxAttemptsCeiling)
		}
	}
	if len(out) == 0 {
		return nil
	}
	if len(out) > core.MaxClaimKinds {
		w.log.Warn("plenum/worker: more kinds set MaxAttempts than a claim carries; items keep the limit they were enqueued with, which Get and the dashboard show", "kinds", len(out), "most", core.MaxClaimKinds)
		return nil
	}
	return out
}
