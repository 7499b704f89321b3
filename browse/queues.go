package browse

import (
	"context"
	"database/sql"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect/sqlkit"
	"github.com/plenumdb/plenum/internal/storesql"
	"github.com/plenumdb/plenum/migrations"
)

// Bounds of QueueSummaryParams.
const (
	// DefaultCountCap is the CountCap of 0.
	DefaultCountCap = 1000
	// MaxCountCap bounds QueueSummaryParams.CountCap.
	MaxCountCap = 1000000
	// DefaultSummaryWindow is the Window of 0.
	DefaultSummaryWindow = 5 * time.Minute
	// MaxSummaryWindow bounds QueueSummaryParams.Window.
	MaxSummaryWindow = 30 * 24 * time.Hour
)

// oldestProbes bounds the priorities probed for a queue's oldest available
// item before one scan of the queue's available items is cheaper.
const oldestProbes = 16

// QueueSummaryParams choose the queues QueueSummaries describes.
type QueueSummaryParams struct {
	// Queue, when set, describes that queue only: up to 128 characters.
	Queue string
	// After, when Queue is empty, starts the list after this queue's name
	// (a keyset page of queues, in the database's order of names).
	After string
	// Limit is the most queues returned: 1 to MaxListLimit; 0 means
	// DefaultListLimit.
	Limit int
	// CountCap is where each count stops: 1 to MaxCountCap; 0 means
	// DefaultCountCap. A summary costs the same however many items there
	// are beyond it.
	CountCap int64
	// Window is how far back FinishedInWindow looks, on the database
	// clock: up to MaxSummaryWindow; 0 means DefaultSummaryWindow.
	Window time.Duration
}

// QueueSummary describes one queue.
type QueueSummary struct {
	Queue string
	// Counts holds the number of the queue's items in each of the five
	// states, exact up to the CountCap; Capped says which counts stopped
	// there (the count is then the cap: there are at least that many).
	Counts map[core.State]int64
	Capped map[core.State]bool
	// OldestAvailable is the available_at of the queue's oldest available
	// item (the one waiting longest, or due soonest), zero if it has none.
	OldestAvailable time.Time
	// FinishedInWindow counts the items of the queue that finished
	// (completed, died or were cancelled) during the Window before Now.
	// FinishedCapped says the window held more than CountCap finished
	// items across all queues, and the count stopped: it is
	// then a lower bound.
	FinishedInWindow int64
	FinishedCapped   bool
	Window           time.Duration
	// Paused is the queue's state in the queues table.
	Paused bool
	// Now is the database clock when the summary was read.
	Now time.Time
}

// QueueSummaries describes, in the database's order of names, each queue
// that has items or a row in the queues table (it was paused once), or
// just p.Queue. Every number is read from an index in bounded ranges: the
// distinct queues one index probe each, each count stopping at
// p.CountCap, the oldest available item from the claim index, and the
// finished items from the finished index. A queue's summary costs the
// same with a million items as with a thousand.
func (r *Reader) QueueSummaries(ctx context.Context, p QueueSummaryParams) ([]QueueSummary, error) {
	if err := r.ready(); err != nil {
		return nil, err
	}
	limit, err := listLimit(p.Limit)
	if err != nil {
		return nil, err
	}
	if err := r.s.LookupName("Queue", p.Queue, migrations.MaxQueueLen); err != nil {
		return nil, err
	}
	if err := r.s.LookupName("After", p.After, migrations.MaxQueueLen); err != nil {
		return nil, err
	}
	if p.CountCap == 0 {
		p.CountCap = DefaultCountCap
	}
	if p.CountCap < 1 || p.CountCap > MaxCountCap {
		return nil, invalid("CountCap", "%d is outside [1, %d]", p.CountCap, MaxCountCap)
	}
	if p.Window == 0 {
		p.Window = DefaultSummaryWindow
	}
	if p.Window < 0 || p.Window > MaxSummaryWindow {
		return nil, invalid("Window", "%v is outside [0, %v]", p.Window, MaxSummaryWindow)
	}
	now, err := r.store.Now(ctx)
	if err != nil {
		return nil, err
	}
	names := []string{p.Queue}
	if p.Queue == "" {
		if names, err = r.queueNames(ctx, p.After, limit); err != nil {
			return nil, err
		}
	}
	queues, err := r.store.Queues(ctx)
	if err != nil {
		return nil, err
	}
	paused := map[string]bool{}
	listed := map[string]bool{}
	for _, q := range queues {
		paused[q.Name], listed[q.Name] = q.Paused, true
	}
	finished, finishedCapped, err := r.finishedInWindow(ctx, p.Window, p.CountCap)
	if err != nil {
		return nil, err
	}
	out := make([]QueueSummary, 0, len(names))
	for _, name := range names {
		qs := QueueSummary{Queue: name, Window: p.Window, Now: now, Paused: paused[name],
			FinishedInWindow: finished[name], FinishedCapped: finishedCapped}
		var has bool
		if qs.Counts, qs.Capped, has, err = r.queueCounts(ctx, name, p.CountCap); err != nil {
			return nil, err
		}
		if !has && !listed[name] {
			continue // p.Queue names no queue
		}
		if qs.Counts[core.StateAvailable] > 0 {
			if qs.OldestAvailable, err = r.oldestAvailable(ctx, name); err != nil {
				return nil, err
			}
		}
		out = append(out, qs)
	}
	return out, nil
}

// queueNames lists up to limit queue names after after, one probe each.
func (r *Reader) queueNames(ctx context.Context, after string, limit int) ([]string, error) {
	var out []string
	err := r.s.Read(ctx, "queue names", func() error {
		out = out[:0]
		cur := after
		for len(out) < limit {
			var name sql.NullString
			var err error
			if cur == "" {
				err = r.s.DB.QueryRowContext(ctx, r.s.SQL(qQueueFirst)).Scan(&name)
			} else {
				err = r.s.DB.QueryRowContext(ctx, r.s.SQL(qQueueNext), cur, cur).Scan(&name)
			}
			if err != nil {
				return err
			}
			if !name.Valid {
				return nil
			}
			out = append(out, name.String)
			cur = name.String
		}
		return nil
	})
	return out, err
}

// queueCounts counts a queue's items per state, each up to capN, and says
// whether the queue has any.
func (r *Reader) queueCounts(ctx context.Context, queue string, capN int64) (map[core.State]int64, map[core.State]bool, bool, error) {
	counts, capped := map[core.State]int64{}, map[core.State]bool{}
	var has bool
	args := make([]any, len(itemStates))
	for i := range args {
		args[i] = queue
	}
	err := r.s.Read(ctx, "queue counts", func() error {
		rows, err := r.s.DB.QueryContext(ctx, r.s.SQL(qQueueCounts(r.s.Dialect, int(capN)+1)), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		has = false
		for rows.Next() {
			var st string
			var n int64
			if err := rows.Scan(&st, &n); err != nil {
				return err
			}
			if n > 0 {
				has = true
			}
			counts[core.State(st)], capped[core.State(st)] = min(n, capN), n > capN
		}
		return rows.Err()
	})
	return counts, capped, has, err
}

// oldestAvailable probes the claim index priority by priority for the
// earliest available_at of the queue's available items.
func (r *Reader) oldestAvailable(ctx context.Context, queue string) (time.Time, error) {
	var oldest time.Time
	err := r.s.Read(ctx, "oldest available", func() error {
		oldest = time.Time{}
		from := int64(-core.MaxPriority)
		for range oldestProbes {
			var prio int64
			at := storesql.Time{Dialect: r.s.Dialect}
			err := r.s.DB.QueryRowContext(ctx, r.s.SQL(qOldestAvailable(r.s.Dialect)), queue, from).Scan(&prio, &at)
			if sqlkit.IsNoRows(err) {
				return nil
			}
			if err != nil {
				return err
			}
			if oldest.IsZero() || at.T.Before(oldest) {
				oldest = at.T
			}
			from = prio + 1
		}
		at := storesql.Time{Dialect: r.s.Dialect}
		if err := r.s.DB.QueryRowContext(ctx, r.s.SQL(qOldestAvailableScan), queue).Scan(&at); err != nil {
			return err
		}
		oldest = at.T
		return nil
	})
	return oldest, err
}

// finishedInWindow counts the items finished in the window by queue,
// reading at most capN+1 of them: capped says it stopped there.
func (r *Reader) finishedInWindow(ctx context.Context, window time.Duration, capN int64) (map[string]int64, bool, error) {
	out := map[string]int64{}
	var total int64
	// One queue is read from the same bounded range of the finished index
	// as all of them: with the queue in the condition, a planner may
	// prefer an index on the queue and read all of the queue's items.
	q, args := r.s.SQL(qFinishedWindow(r.s.Dialect, int(capN)+1)), []any{-window.Microseconds()}
	err := r.s.Read(ctx, "finished in window", func() error {
		rows, err := r.s.DB.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		clear(out)
		total = 0
		for rows.Next() {
			var name string
			var n int64
			if err := rows.Scan(&name, &n); err != nil {
				return err
			}
			out[name] = min(n, capN)
			total += n
		}
		return rows.Err()
	})
	if err != nil {
		return nil, false, err
	}
	return out, total > capN, nil
}
