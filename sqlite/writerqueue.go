package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"
	"weak"
)

// writerQueues holds one writer queue per *sql.DB. The key is a weak
// pointer, so that the map never keeps a database alive; a cleanup removes
// the entry once the database is collected.
var writerQueues sync.Map // weak.Pointer[sql.DB] -> *writers

func writerQueue(db *sql.DB) *writers {
	key := weak.Make(db)
	if q, ok := writerQueues.Load(key); ok {
		return q.(*writers)
	}
	q, loaded := writerQueues.LoadOrStore(key, &writers{})
	if !loaded {
		runtime.AddCleanup(db, func(k weak.Pointer[sql.DB]) { writerQueues.Delete(k) }, key)
	}
	return q.(*writers)
}

// writers lets one write transaction of a *sql.DB run at a time. Waiters
// get their turn in the order they came, except that an urgent one (a
// heartbeat: dialect.TxOptions.Urgent) goes before every ordinary one: a
// process busy with its own writes must not queue its heartbeat behind
// them all, or it would look dead to the reapers of other processes, and
// to itself, while it works.
type writers struct {
	mu      sync.Mutex
	busy    bool
	urgent  []chan struct{}
	ordered []chan struct{}
}

// acquire waits for the writer's turn, as long as ctx allows and at most
// wait; an urgent writer goes before the ordinary ones waiting.
func (q *writers) acquire(ctx context.Context, urgent bool, wait time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	q.mu.Lock()
	if !q.busy {
		q.busy = true
		q.mu.Unlock()
		return nil
	}
	turn := make(chan struct{})
	if urgent {
		q.urgent = append(q.urgent, turn)
	} else {
		q.ordered = append(q.ordered, turn)
	}
	q.mu.Unlock()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	var err error
	select {
	case <-turn:
		return nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-timer.C:
		err = fmt.Errorf("%w (waited %s)", ErrWriterQueueTimeout, wait)
	}
	if !q.leave(turn) {
		// The turn came as the wait ended: pass it on.
		q.release()
	}
	return err
}

// leave takes turn out of the queue; false when it was already given the
// turn.
func (q *writers) leave(turn chan struct{}) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, list := range []*[]chan struct{}{&q.urgent, &q.ordered} {
		if i := slices.Index(*list, turn); i >= 0 {
			*list = slices.Delete(*list, i, i+1)
			return true
		}
	}
	return false
}

// release ends the current writer's turn: the first urgent waiter gets it,
// else the first ordinary one, else nobody until the next acquire.
func (q *writers) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, list := range []*[]chan struct{}{&q.urgent, &q.ordered} {
		if len(*list) > 0 {
			turn := (*list)[0]
			*list = (*list)[1:]
			close(turn)
			return
		}
	}
	q.busy = false
}
