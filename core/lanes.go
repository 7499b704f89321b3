package core

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/fault"
)

// A lane is the items of one flow key of one queue, one row of the lanes
// table. Its next_at is the lane's turn: NULL while it has no work, else
// a time from which a claim may take it, in next_at order. The claim
// keeps it true of what it saw under the lane's lock (laneclaim.go); what
// gives a lane work without a claim of it moves its turn no later than
// the work's time, locking the lane, in the same transaction: an
// enqueue of keyed items (lanesReady), a revive (reviveLanes), a
// signal (wakeItemLane), or a claim's hand-back of its item (a failure,
// a release, a parked Await, a clean stop, the reaper: handBack). So a
// claim may set idle a lane in which it finds no available work, items
// of it claimed or not: every way back to available wakes the lane.
//
// Retention deletes a lane that has been idle for its age and has no
// available or claimed item (purgeLaneGone). What gives a lane work
// therefore finds its row by an update that locks it, and opens it only
// where that update missed it (moveLanes): an insert that finds the row
// there takes no lock on PostgreSQL, so a lane opened and then updated
// could be deleted in between, its new work left with no turn.

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
	return s.readyRefs(ctx, q, lanes)
}

// handBack gives the lanes of keyed items their claims have just handed
// back (a failure to retry, a release, a parked Await, a clean stop, the
// reaper) a turn no later than each item's time, in the hand-back's
// transaction, after the items' own update. A claim sets a lane idle
// once it finds no available work there, whatever the lane's items held
// by claims: without this, an item handed back to an idle lane would
// wait for the lane's next enqueue.
func (s *Store) handBack(ctx context.Context, q dialect.Querier, lanes []laneRef) error {
	return s.readyRefs(ctx, q, slices.DeleteFunc(lanes, func(l laneRef) bool { return l.key == "" }))
}

// readyRefs moves the turns of lanes no later than their work's time,
// opening those that have none, in key order so that transactions over
// overlapping keys lock lanes in the same order.
func (s *Store) readyRefs(ctx context.Context, q dialect.Querier, lanes []laneRef) error {
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
	// One lane per key, at its earliest work; a queue's keys in one
	// group, at the earliest work of them all (a turn early costs a claim
	// a look, never a missed item). Two groups, those with work at once
	// and the others, would lock the lanes out of key order: a transaction
	// giving a work now and b later would lock a then b, one giving b work
	// now and a later b then a, and the two could deadlock.
	lanes = slices.CompactFunc(lanes, func(a, b laneRef) bool { return a.queue == b.queue && a.key == b.key })
	for start := 0; start < len(lanes); {
		end := start
		for end < len(lanes) && lanes[end].queue == lanes[start].queue {
			end++
		}
		keys := make([]string, 0, end-start)
		delay := lanes[start].delay
		for _, l := range lanes[start:end] {
			keys = append(keys, l.key)
			delay = min(delay, l.delay)
		}
		if err := s.readyLanes(ctx, q, lanes[start].queue, keys, max(delay, 0)); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// laneRef is a lane given work, from delay on.
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
// from now, opening those that have none.
func (s *Store) readyLanes(ctx context.Context, q dialect.Querier, queue string, keys []string, delay time.Duration) error {
	for _, chunk := range chunks(keys, s.inListMax(3)) {
		args := make([]any, 0, len(chunk)+3)
		args = append(args, micros(delay), micros(delay), queue)
		for _, k := range chunk {
			args = append(args, k)
		}
		err := s.moveLanes(ctx, q, queue, chunk, func() (sql.Result, error) {
			return q.ExecContext(ctx, s.sql(qLanesReady(len(chunk))), args...)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// maxLaneOpens bounds the rounds of moveLanes. A round misses a lane
// only when retention deleted it after the round's open found it there:
// the next round's open inserts it, and its update finds it under the
// insert's lock.
const maxLaneOpens = 5

// moveLanes runs update, which changes every row of keys' lanes in queue
// it finds (writing updated_at, so that a database that counts changed
// rows counts each), until it has found them all, opening the missing
// ones between rounds. The common case, every lane there, is the one
// update.
func (s *Store) moveLanes(ctx context.Context, q dialect.Querier, queue string, keys []string, update func() (sql.Result, error)) error {
	for round := 0; ; round++ {
		if err := fault.Hit(ctx, fault.LanesBeforeUpdate); err != nil {
			return err
		}
		res, err := update()
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if int(n) >= len(keys) {
			return nil
		}
		if round == maxLaneOpens {
			return fmt.Errorf("plenum: the lanes of %d keys of queue %q: %d found after %d opens", len(keys), queue, n, round)
		}
		if err := s.openLanes(ctx, q, queue, slices.Clone(keys)); err != nil {
			return err
		}
	}
}

// wakeItemLane moves the turn of item id's lane, if it has one, to now:
// the item has just become claimable by a signal. It was available, with
// its wait's time, so its lane has a turn and retention leaves it.
func (s *Store) wakeItemLane(ctx context.Context, q dialect.Querier, id uuid.UUID) error {
	_, err := q.ExecContext(ctx, s.sql(qLaneWakeItem), int64(0), int64(0), s.d.UUID(id))
	return err
}

// reviveLanes gives the lanes of the items a revive has just made
// claimable (read, in q, by the statement read with bind arg) a turn
// now, opening those that retention deleted while the items were dead.
func (s *Store) reviveLanes(ctx context.Context, q dialect.Querier, read string, arg any) error {
	rows, err := q.QueryContext(ctx, s.sql(read), arg)
	if err != nil {
		return err
	}
	byQueue := map[string][]string{}
	var queues []string
	for rows.Next() {
		var queue, key string
		if err := rows.Scan(&queue, &key); err != nil {
			rows.Close()
			return err
		}
		if byQueue[queue] == nil {
			queues = append(queues, queue)
		}
		byQueue[queue] = append(byQueue[queue], key)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	slices.Sort(queues)
	for _, queue := range queues {
		keys := byQueue[queue]
		slices.Sort(keys)
		if err := s.readyLanes(ctx, q, queue, slices.Compact(keys), 0); err != nil {
			return err
		}
	}
	return nil
}
