package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/cmd/cmdline"
)

// flowPauseMax is the longest a flowDrain worker waits after a claim that
// found nothing before it claims again: the runtime's poll interval in
// runtimeDrain.
const flowPauseMax = 10 * time.Millisecond

// flowDrain is plenumDrain for items under limits: o.Workers workers, each
// its own owner, claim and complete batches of queue until n items are
// completed. A claim that finds nothing while others hold items is not
// the end (the limits may leave a worker nothing until their claims end):
// the worker waits, from a millisecond, doubling up to flowPauseMax, and
// claims again.
func flowDrain(ctx context.Context, st *core.Store, queue string, n int, o benchOptions) error {
	var done atomic.Int64
	return fanWorkers(ctx, o.Workers, func(ctx context.Context) error {
		owner, err := st.RegisterOwner(ctx, core.RegisterOwnerParams{})
		if err != nil {
			return err
		}
		defer func() { _ = st.Deregister(context.WithoutCancel(ctx), owner) }() // holds nothing by then
		completions := make([]core.Completion, 0, o.Batch)
		pause := time.Millisecond
		for done.Load() < int64(n) {
			cs, err := st.Claim(ctx, core.ClaimParams{Queue: queue, Owner: owner, Limit: o.Batch, Lease: time.Hour})
			if err != nil {
				return err
			}
			if len(cs) == 0 {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(pause):
				}
				pause = min(2*pause, flowPauseMax)
				continue
			}
			pause = time.Millisecond
			completions = completions[:0]
			for _, c := range cs {
				completions = append(completions, core.Completion{Claim: c, Result: benchResult})
			}
			lost, err := st.CompleteMany(ctx, completions)
			if err != nil {
				return err
			}
			if len(lost) > 0 {
				return fmt.Errorf("%s lost claims with no reaper running", cmdline.Plural(len(lost), "completion"))
			}
			done.Add(int64(len(cs)))
		}
		return nil
	})
}
