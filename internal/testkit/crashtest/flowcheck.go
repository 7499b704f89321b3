package crashtest

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/plenumdb/plenum/dialect"
)

// flowOverlaps computes, key by key, the most runs that were under way at
// once, and lists the moments a key had more than limit. At equal times
// an end counts before a start: a run's end is recorded before its claim
// ends, and the next run's start after its claim began.
func flowOverlaps(runs []flowRun, limit int) (peak int, over []string) {
	type event struct {
		at    time.Time
		delta int
		item  string
	}
	byKey := map[string][]event{}
	for _, r := range runs {
		byKey[r.key] = append(byKey[r.key], event{r.start, +1, r.item}, event{r.end, -1, r.item})
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		evs := byKey[k]
		slices.SortFunc(evs, func(a, b event) int {
			if c := a.at.Compare(b.at); c != 0 {
				return c
			}
			return a.delta - b.delta
		})
		n, worst := 0, 0
		var at time.Time
		for _, e := range evs {
			n += e.delta
			if n > worst {
				worst, at = n, e.at
			}
		}
		peak = max(peak, worst)
		if worst > limit {
			over = append(over, fmt.Sprintf("key %s had %d runs under way at once at %s, over its limit of %d", k, worst, at.Format(time.RFC3339Nano), limit))
		}
	}
	return peak, over
}

// flowSampler reads the claimed items of each key of the test's queue
// again and again while the run lasts.
type flowSampler struct {
	max  map[string]int // the most claims seen at once, by key
	over []string
	err  error
}

// run samples until ctx ends.
func (s *flowSampler) run(ctx context.Context, db *sql.DB, d dialect.Dialect, items string) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		counts, err := claimedPerKey(ctx, db, d, items)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			s.err = err
			return
		}
		for k, n := range counts {
			if n > s.max[k] {
				s.max[k] = n
			}
			if n > flowLimit && len(s.over) < 10 {
				s.over = append(s.over, fmt.Sprintf("key %s had %d items claimed at once, over its limit of %d", k, n, flowLimit))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// peak is the most claims seen at once of one key.
func (s *flowSampler) peak() int {
	p := 0
	for _, n := range s.max {
		p = max(p, n)
	}
	return p
}

// claimedPerKey counts the claimed items of each key of the test's queue
// in the items table named items, in one statement.
func claimedPerKey(ctx context.Context, db *sql.DB, d dialect.Dialect, items string) (map[string]int, error) {
	rows, err := db.QueryContext(ctx, d.Rebind("SELECT flow_key, COUNT(*) FROM "+items+
		" WHERE queue = ? AND state = 'claimed' AND flow_key IS NOT NULL GROUP BY flow_key"), flowQueue)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var k string
		var n int
		if err := rows.Scan(&k, &n); err != nil {
			return nil, err
		}
		out[k] = n
	}
	return out, rows.Err()
}
