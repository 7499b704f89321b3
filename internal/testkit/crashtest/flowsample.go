package crashtest

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/plenumdb/plenum/dialect"
)

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
