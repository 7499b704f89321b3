package worker

import "time"

// batching is how a queue's claim loop gathers free slots into batches
// rather than claiming each slot as it frees.
type batching struct {
	// slots is the queue's MaxWorkers.
	slots int
	// threshold is the free slots worth a claim without waiting: a
	// quarter of the slots, at least one.
	threshold int
	// merge makes the loop wait for the slots of landing completions: see
	// landWait.
	merge bool
	// poll and landWait bound the waits for more slots.
	poll, landWait time.Duration
}

func newBatching(q QueueConfig, cfg Config, landWait time.Duration) batching {
	return batching{
		slots:     q.MaxWorkers,
		threshold: max(1, q.MaxWorkers/4),
		merge:     q.MaxWorkers <= cfg.CompleteBatch,
		poll:      cfg.PollInterval,
		landWait:  landWait,
	}
}

// waitBeforeClaim decides whether the claim loop claims its free slots
// now or waits first, and up to how long: with none free it waits for
// one (upTo is zero: no bound); with fewer than a quarter free, for more,
// up to a poll interval; with slots about to free as a completion lands,
// for those, up to landWait. A wake-up that came while it waited (woken)
// ends the wait for more: items are waiting, and it claims what is free.
// landing is the running handlers whose completions are landing, waited
// how long the loop has waited so far (zero if it has not).
func (b batching) waitBeforeClaim(free int, landing int64, woken bool, waited time.Duration) (wait bool, upTo time.Duration) {
	if free <= 0 {
		return true, 0
	}
	var limit time.Duration
	switch {
	case free < b.threshold:
		limit = b.poll
	case b.merge && free < b.slots && landing > 0:
		limit = b.landWait
	}
	if limit <= 0 || woken || waited >= limit {
		return false, 0
	}
	return true, limit - waited
}
