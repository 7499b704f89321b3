package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
)

// errPlanned is the failure of a unit planned to fail its first attempt.
var errPlanned = errors.New("chaos: planned failure of the first attempt")

// workload is the handlers of one worker process.
type workload struct {
	plan   Plan
	store  *core.Store
	prefix string
	worker int              // the worker slot, for the audit
	clock  func() time.Time // the process's application clock, skewed or not
	acks   io.Writer        // where completions acknowledged are written (acks.go)
}

type stepArgs struct{ C, S int }
type fanArgs struct{ F, N int }

// register installs the workload's handlers on w.
func (wl *workload) register(w *worker.Worker) {
	worker.Handle(w, kindStep, wl.step)
	worker.Handle(w, kindParent, wl.parent)
	worker.Handle(w, kindChild, wl.child)
	worker.Handle(w, kindJoin, wl.join)
	worker.Handle(w, kindFlow, wl.flow)
	w.HandleFunc(kindTick, wl.tick)
}

// audit completes job's item through its fence, with the audit row of
// unit and whatever more writes the fence must carry.
func audit[T any](ctx context.Context, wl *workload, job *worker.Job[T], unit string, seen, total int64, more func(ctx context.Context, f *core.Fenced) error) error {
	err := job.Fence(ctx, func(ctx context.Context, f *core.Fenced) error {
		if more != nil {
			if err := more(ctx, f); err != nil {
				return err
			}
		}
		return insertAudit(ctx, f, wl.store.Dialect(), wl.prefix, auditRow{
			Unit: unit, Kind: job.Item().Kind, Claim: f.Claim(), Worker: wl.worker,
			Seen: seen, Total: total, AppTime: wl.clock(),
		})
	})
	if err == nil {
		writeAck(wl.acks, unit)
	}
	return err
}

// step is one step of a chain: it enqueues the next step in the fence
// that completes it, so that the chain can neither break nor fork.
func (wl *workload) step(ctx context.Context, job *worker.Job[stepArgs]) error {
	c, s := job.Args.C, job.Args.S
	unit := stepUnit(c, s)
	if wl.plan.failsFirst(unit) && job.Attempt() == 1 {
		return errPlanned
	}
	return audit(ctx, wl, job, unit, 0, 0, func(ctx context.Context, f *core.Fenced) error {
		if s+1 >= wl.plan.ChainSteps {
			return nil
		}
		_, err := f.Enqueue(ctx, stepSpec(c, s+1))
		return err
	})
}

// stepSpec is the item of a chain's step.
func stepSpec(chain, step int) core.ItemSpec {
	return core.ItemSpec{Queue: queue, Kind: kindStep, Key: stepKey(chain, step),
		Payload: fmt.Appendf(nil, `{"C":%d,"S":%d}`, chain, step)}
}

// parentSpec is the item of a fan-out's parent.
func parentSpec(fan int) core.ItemSpec {
	return core.ItemSpec{Queue: parentQueue, Kind: kindParent, Key: parentKey(fan), Payload: fmt.Appendf(nil, `{"F":%d}`, fan)}
}

// parent expands into the plan's children, a page per transaction, and
// completes in the transaction that seals the barrier.
func (wl *workload) parent(ctx context.Context, job *worker.Job[fanArgs]) error {
	fan := job.Args.F
	if wl.plan.failsFirst(parentKey(fan)) && job.Attempt() == 1 {
		return errPlanned
	}
	_, err := wl.store.Expand(ctx, job.Claim(), core.ExpandParams{
		Barrier: core.BarrierSpec{Name: barrierFan, Join: core.JoinSpec{Queue: queue, Kind: kindJoin, Payload: fmt.Appendf(nil, `{"F":%d}`, fan)}},
		Next: func(ctx context.Context, cursor string) (core.ChildPage, error) {
			from := 0
			if cursor != "" {
				n, err := strconv.Atoi(cursor)
				if err != nil {
					return core.ChildPage{}, fmt.Errorf("chaos: fan-out %d: cursor %q: %w", fan, cursor, err)
				}
				from = n
			}
			to := min(from+wl.plan.Page, wl.plan.Children)
			page := core.ChildPage{Next: strconv.Itoa(to), Done: to >= wl.plan.Children}
			for n := from; n < to; n++ {
				// Child n of every fan-out shares priority n, so that
				// concurrent handlers take children of many barriers, not
				// a run of one barrier's whose arrivals would queue on its
				// row.
				page.Children = append(page.Children, core.ChildSpec{Key: childKey(n), Queue: queue, Kind: kindChild, Priority: n,
					Payload: fmt.Appendf(nil, `{"F":%d,"N":%d}`, fan, n)})
			}
			return page, nil
		},
		CompleteParent: true,
	})
	return err
}

// child returns its number as its result.
func (wl *workload) child(ctx context.Context, job *worker.Job[fanArgs]) error {
	unit := childUnit(job.Args.F, job.Args.N)
	if wl.plan.failsFirst(unit) && job.Attempt() == 1 {
		return errPlanned
	}
	if err := job.SetResult(map[string]int{"V": job.Args.N}); err != nil {
		return err
	}
	if wl.plan.Batched {
		return nil
	}
	return audit(ctx, wl, job, unit, 0, 0, nil)
}

// join reads every child of its barrier by keyset pages and audits how
// many completed and the sum of their results.
func (wl *workload) join(ctx context.Context, job *worker.Job[fanArgs]) error {
	unit := joinUnit(job.Args.F)
	if wl.plan.failsFirst(unit) && job.Attempt() == 1 {
		return errPlanned
	}
	var seen, total int64
	after := uuid.Nil
	for {
		page, err := wl.store.Children(ctx, core.ChildrenParams{Barrier: job.Item().JoinOf, After: after, Limit: wl.plan.Page})
		if err != nil {
			return fmt.Errorf("chaos: %s: read the children: %w", unit, err)
		}
		if len(page) == 0 {
			break
		}
		for _, it := range page {
			after = it.ID
			if it.State != core.StateCompleted {
				continue
			}
			var r struct{ V int64 }
			if err := json.Unmarshal(it.Result, &r); err != nil {
				return worker.Discard(fmt.Errorf("chaos: %s: child %s has result %s: %w", unit, it.ID, it.Result, err))
			}
			seen++
			total += r.V
		}
	}
	return audit(ctx, wl, job, unit, seen, total, nil)
}

// tick is a periodic tick's item.
func (wl *workload) tick(ctx context.Context, job *worker.Job[json.RawMessage]) error {
	return audit(ctx, wl, job, tickUnit(job.Item().Key), 0, 0, nil)
}

// seed enqueues the first items of generation g of the plan: every
// chain's first step, every fan-out's parent and the keyed items, under
// the plan's limits. Their keys make seeding again a no-op.
func seed(ctx context.Context, s *core.Store, p Plan, g int) error {
	if err := setLimits(ctx, s, p); err != nil {
		return err
	}
	specs := flowSpecs(p, g)
	for c := g * p.Chains; c < (g+1)*p.Chains; c++ {
		specs = append(specs, stepSpec(c, 0))
	}
	for f := g * p.Fanouts; f < (g+1)*p.Fanouts; f++ {
		specs = append(specs, parentSpec(f))
	}
	for len(specs) > 0 {
		n := min(len(specs), 500)
		if _, err := s.Enqueue(ctx, specs[:n]...); err != nil {
			return fmt.Errorf("chaos: seed the workload: %w", err)
		}
		specs = specs[n:]
	}
	return nil
}
