package chaos

import (
	"context"
	"fmt"
	"time"

	"github.com/plenumdb/plenum/migrations"
)

// sampleFlow reads, again and again until ctx ends, how many items of
// each key under the concurrency limit are claimed, in one statement
// each time: a second witness of the limit besides the flow audit,
// which sees the claims of workers killed before their handler ran too.
// It records the most seen and each time a key was over the limit.
func (r *round) sampleFlow(ctx context.Context) {
	p := r.cfg.Plan
	if p.FlowKeys == 0 {
		return
	}
	query := r.d.Rebind("SELECT flow_key, COUNT(*) FROM " + migrations.NamesFor(r.cfg.Prefix).Items +
		" WHERE queue = ? AND state = 'claimed' AND flow_key LIKE '" + flowKeyPrefix + "%' GROUP BY flow_key")
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		rows, err := r.db.QueryContext(ctx, query, queue)
		if err == nil {
			for rows.Next() {
				var key string
				var n int
				if rows.Scan(&key, &n) != nil {
					break
				}
				r.count(func(res *Result) {
					res.SampledPeak = max(res.SampledPeak, n)
					if n > p.FlowLimit {
						res.SampledOver = append(res.SampledOver, fmt.Sprintf("key %s had %d items claimed at once (sampled at %.1fs)", key, n, time.Since(r.start).Seconds()))
					}
				})
			}
			rows.Close()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
