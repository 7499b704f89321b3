package core

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
)

// A lane is the items of one flow key of one queue, one row of the lanes
// table. Its next_at is the lane's turn: NULL while it has no work, else
// a time from which a claim may take it, in next_at order. The claim
// keeps it true of what it saw under the lane's lock (laneclaim.go); what
// gives a lane work without a claim of it moves its turn no later than
// the work's time, locking the lane, in the same transaction: an
// enqueue of keyed items (lanesReady), a revive or a signal (wakeLanes).
// Work a lane's own claims hand back (a failure, a release, the reaper)
// needs nothing: a lane whose items are claimed keeps a turn that has
// come.

// lanesReady opens the lanes of the keyed specs that were inserted
// (out[i] did not exist before) and moves their turns to their work's time, in the
// enqueue's transaction q, in key order so that enqueues of overlapping
// keys lock lanes in the same order.
func (s *Store) lanesReady(ctx context.Context, q dialect.Querier, specs []ItemSpec, out []EnqueueResult) error {
	var lanes []laneRef
	for i := range specs {
		if specs[i].FlowKey != "" && !out[i].Existed {
			lanes = append(lanes, laneRef{specs[i].Queue, specs[i].FlowKey, specs[i].Delay})
		}
	}
	if len(lanes) == 0 {
		return nil
	}
	slices.SortFunc(lanes, func(a, b laneRef) int {
		if a.queue != b.queue {
			return strings.Compare(a.queue, b.queue)
		}
		if a.key != b.key {
			return strings.Compare(a.key, b.key)
		}
		return int(a.delay - b.delay)
	})
	// One lane per key, at its earliest work; the keys of a queue in two
	// groups, those with work at once and the others at the earliest of
	// theirs (a turn early costs a claim a look, never a missed item).
	lanes = slices.CompactFunc(lanes, func(a, b laneRef) bool { return a.queue == b.queue && a.key == b.key })
	for start := 0; start < len(lanes); {
		end := start
		for end < len(lanes) && lanes[end].queue == lanes[start].queue {
			end++
		}
		var now, later []string
		var delay time.Duration
		for _, l := range lanes[start:end] {
			if l.delay <= 0 {
				now = append(now, l.key)
			} else {
				if len(later) == 0 || l.delay < delay {
					delay = l.delay
				}
				later = append(later, l.key)
			}
		}
		queue := lanes[start].queue
		if err := s.openLanes(ctx, q, queue, append(slices.Clone(now), later...)); err != nil {
			return err
		}
		if err := s.readyLanes(ctx, q, queue, now, 0); err != nil {
			return err
		}
		if err := s.readyLanes(ctx, q, queue, later, delay); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// laneRef is a lane an enqueue gave work, from delay on.
type laneRef struct {
	queue, key string
	delay      time.Duration
}

// openLanes inserts, idle, the lanes of those of keys in queue that have
// none.
func (s *Store) openLanes(ctx context.Context, q dialect.Querier, queue string, keys []string) error {
	slices.Sort(keys)
	for _, chunk := range chunks(keys, s.laneOpenMax()) {
		args := make([]any, 0, 3*len(chunk))
		for _, k := range chunk {
			args = append(args, s.d.UUID(uuid.Must(uuid.NewV7())), queue, k)
		}
		if _, err := q.ExecContext(ctx, s.laneOpenSQL(len(chunk)), args...); err != nil {
			return err
		}
	}
	return nil
}

// laneOpenMax is the most lanes one insert opens.
func (s *Store) laneOpenMax() int {
	n := min(maxInsertRows, max(1, s.caps.MaxBindParams/3))
	if s.caps.MaxInsertRows > 0 {
		n = min(n, s.caps.MaxInsertRows)
	}
	return n
}

// readyLanes moves the turns of keys' lanes in queue no later than delay
// from now.
func (s *Store) readyLanes(ctx context.Context, q dialect.Querier, queue string, keys []string, delay time.Duration) error {
	for _, chunk := range chunks(keys, s.inListMax(3)) {
		args := make([]any, 0, len(chunk)+3)
		args = append(args, micros(delay), micros(delay), queue)
		for _, k := range chunk {
			args = append(args, k)
		}
		if _, err := q.ExecContext(ctx, s.sql(qLanesReady(len(chunk))), args...); err != nil {
			return err
		}
	}
	return nil
}

// wakeItemLane moves the turn of item id's lane, if it has one, to now:
// the item has just become claimable by a revive or a signal.
func (s *Store) wakeItemLane(ctx context.Context, q dialect.Querier, id uuid.UUID) error {
	_, err := q.ExecContext(ctx, s.sql(qLaneWakeItem), int64(0), int64(0), s.d.UUID(id))
	return err
}

// wakeBarrierLanes moves the turns of the lanes of a barrier's children
// to now: a revive has just made some claimable.
func (s *Store) wakeBarrierLanes(ctx context.Context, q dialect.Querier, barrier uuid.UUID) error {
	_, err := q.ExecContext(ctx, s.sql(qLaneWakeBarrier), int64(0), int64(0), s.d.UUID(barrier))
	return err
}
