package core

import (
	"context"
	"time"

	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
)

// QueueState is a queue's row in the queues table.
type QueueState struct {
	// Name is the queue's name.
	Name string
	// Paused means no claim takes the queue's items.
	Paused bool
	// UpdatedAt is when the queue was last paused or resumed, on the
	// database clock.
	UpdatedAt time.Time
}

// PauseQueue pauses queue: from the moment it commits, no claim of any
// process takes the queue's items, until ResumeQueue. Claims already made
// are not touched: their holders finish them. Pausing a paused queue, or a
// queue with no items yet, is allowed.
func (s *Store) PauseQueue(ctx context.Context, queue string) error {
	return s.setPaused(ctx, "pause queue", queue, true)
}

// ResumeQueue lets claims take the items of queue again. Resuming a queue
// that is not paused does nothing.
func (s *Store) ResumeQueue(ctx context.Context, queue string) error {
	return s.setPaused(ctx, "resume queue", queue, false)
}

func (s *Store) setPaused(ctx context.Context, op, queue string, paused bool) error {
	if err := lookupName("queue", queue, migrations.MaxQueueLen, true); err != nil {
		return err
	}
	return s.inTx(ctx, op, func(tx dialect.Tx) error {
		if paused {
			// A queue's row is made by its first pause; an UPDATE
			// alone could not tell "no row" from "no change" on MySQL.
			res, err := tx.ExecContext(ctx, s.queueOpenSQL(), queue, s.d.Bool(true))
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n == 1 {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, s.sql(qQueueSetPause), s.d.Bool(paused), queue)
		return err
	})
}

// Queues lists the queues that were ever paused, in name order, with
// their state. A queue never paused has no row and is not listed.
func (s *Store) Queues(ctx context.Context) ([]QueueState, error) {
	var out []QueueState
	err := s.read(ctx, "queues", func() error {
		var err error
		out, err = s.readQueues(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readQueues reads the queues table once.
func (s *Store) readQueues(ctx context.Context) ([]QueueState, error) {
	rows, err := s.db.QueryContext(ctx, s.sql(qQueueList), s.d.Bool(true))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []QueueState
	for rows.Next() {
		var q QueueState
		var paused int
		var at any
		if err := rows.Scan(&q.Name, &paused, &at); err != nil {
			return nil, err
		}
		if q.UpdatedAt, err = s.d.ScanTime(at); err != nil {
			return nil, err
		}
		q.Paused = paused == 1
		out = append(out, q)
	}
	return out, rows.Err()
}
