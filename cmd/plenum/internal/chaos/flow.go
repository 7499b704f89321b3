package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/flowcheck"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/worker"
)

// Flow control in a round: keyed items of the round's queue, some keys
// under the queue's default concurrency limit (Plan.FlowLimit), others
// under a rate limit of their own (Plan.Rate per Plan.RatePer). Their
// handlers record each run's claim time through a fence, and its end in
// the fence that completes the item, in a second audit table: the flow
// audit. Check proves from it, and from the attempts where a run was cut
// short, that no key ever had more claims at once than its limit and
// that no window of a rate's period began more claims than Rate + Burst.

// kindFlow is the keyed items' kind.
const kindFlow = "chaos.flow"

// flowKey and rateKey name the keys under the concurrency limit and
// under the rate limit.
func flowKey(k int) string { return fmt.Sprintf("%s%d", flowKeyPrefix, k) }
func rateKey(k int) string { return fmt.Sprintf("%s%d", rateKeyPrefix, k) }

const flowKeyPrefix, rateKeyPrefix = "cc", "rr"

// flowUnit and rateUnit name item n of key k of generation g.
func flowUnit(g, k, n int) string { return fmt.Sprintf("flow/%d/%d/%d", g, k, n) }
func rateUnit(g, k, n int) string { return fmt.Sprintf("rate/%d/%d/%d", g, k, n) }

type flowArgs struct{ U string }

// flowIndex is the place of a keyed unit (its name split at "/") among
// the plan's: generation by generation, the concurrency-limited keys'
// items, then the rate-limited keys'.
func (p Plan) flowIndex(part []string) (int, bool) {
	if len(part) != 4 {
		return 0, false
	}
	var v [3]int
	for i := range v {
		n, err := strconv.Atoi(part[i+1])
		if err != nil || n < 0 {
			return 0, false
		}
		v[i] = n
	}
	g, k, n := v[0], v[1], v[2]
	if g >= p.gens() {
		return 0, false
	}
	base := g * p.flowUnits()
	switch part[0] {
	case "flow":
		if k < p.FlowKeys && n < p.FlowItems {
			return base + n*p.FlowKeys + k, true
		}
	case "rate":
		if k < p.RateKeys && n < p.RateItems {
			return base + p.FlowKeys*p.FlowItems + n*p.RateKeys + k, true
		}
	}
	return 0, false
}

// flowUnitAt is the name of the keyed unit at place i (flowIndex).
func (p Plan) flowUnitAt(i int) string {
	g, i := i/p.flowUnits(), i%p.flowUnits()
	if i < p.FlowKeys*p.FlowItems {
		return flowUnit(g, i%p.FlowKeys, i/p.FlowKeys)
	}
	i -= p.FlowKeys * p.FlowItems
	return rateUnit(g, i%p.RateKeys, i/p.RateKeys)
}

// flowUnits is the number of keyed units of one generation.
func (p Plan) flowUnits() int { return p.FlowKeys*p.FlowItems + p.RateKeys*p.RateItems }

// flowBurst is the rate's burst as the store counts it.
func (p Plan) flowBurst() int { return max(1, p.RateBurst) }

// setLimits gives the round's queue the plan's limits.
func setLimits(ctx context.Context, s *core.Store, p Plan) error {
	if p.FlowKeys > 0 {
		if err := s.SetLimit(ctx, core.Limit{Queue: queue, Concurrency: p.FlowLimit}); err != nil {
			return fmt.Errorf("chaos: set the concurrency limit: %w", err)
		}
	}
	for k := range p.RateKeys {
		if err := s.SetLimit(ctx, core.Limit{Queue: queue, Key: rateKey(k), Rate: p.Rate, Per: p.RatePer, Burst: p.RateBurst}); err != nil {
			return fmt.Errorf("chaos: set the rate limit of %s: %w", rateKey(k), err)
		}
	}
	return nil
}

// flowSpecs are the keyed items of generation g.
func flowSpecs(p Plan, g int) []core.ItemSpec {
	var specs []core.ItemSpec
	add := func(key, unit string) {
		specs = append(specs, core.ItemSpec{Queue: queue, Kind: kindFlow, FlowKey: key, Key: unit,
			Payload: fmt.Appendf(nil, `{"U":%q}`, unit)})
	}
	for n := range p.FlowItems {
		for k := range p.FlowKeys {
			add(flowKey(k), flowUnit(g, k, n))
		}
	}
	for n := range p.RateItems {
		for k := range p.RateKeys {
			add(rateKey(k), rateUnit(g, k, n))
		}
	}
	return specs
}

// flowHold is how long a keyed item's handler holds its claim.
const flowHold = 20 * time.Millisecond

// flow is a keyed item's handler: it records its run's start, holds the
// item a moment, and completes it with its unit's audit row and the
// run's end.
func (wl *workload) flow(ctx context.Context, job *worker.Job[flowArgs]) error {
	unit, c, d := job.Args.U, job.Claim(), wl.store.Dialect()
	held, err := wl.store.Fence(ctx, c, func(ctx context.Context, f *core.Fenced) error {
		return insertFlowRun(ctx, f, d, wl.prefix, c, "start")
	})
	if err != nil {
		return err
	}
	if !held {
		return fmt.Errorf("chaos: %s: %w", unit, core.ErrClaimLost)
	}
	if wl.plan.failsFirst(unit) && job.Attempt() == 1 {
		return errPlanned
	}
	sleep(ctx, flowHold)
	// The run ends in its end record even when the worker lost its owner
	// meanwhile (it would otherwise give the item back, and the run's end
	// would be recorded nowhere), unless the reaper ended its claim
	// already: the reaper's record is then its end.
	end, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return audit(end, wl, job, unit, 0, 0, func(ctx context.Context, f *core.Fenced) error {
		return insertFlowRun(ctx, f, d, wl.prefix, c, "end")
	})
}

// flowAudit is the flow audit's table under prefix.
func flowAudit(prefix string) dialect.Table { return flowcheck.AuditTable(prefix + "chaos_flow") }

// insertFlowRun writes the flow audit's row of event for c through f.
func insertFlowRun(ctx context.Context, f *core.Fenced, d dialect.Dialect, prefix string, c core.Claim, event string) error {
	if err := flowcheck.Record(ctx, f, d, flowAudit(prefix).Name, migrations.NamesFor(prefix).Items, c, event); err != nil {
		return fmt.Errorf("chaos: flow audit of %s: %w", c.ID, err)
	}
	return nil
}

// flowRuns reads the runs the flow audit records: each from its claim to
// its end record or, when it has none, to the first end of its item's
// claims the attempts record after its start (the reaper's, a
// failure's). A run with neither is counted in unended and left out: a
// worker gave its claim back without a record.
func flowRuns(ctx context.Context, db *sql.DB, d dialect.Dialect, prefix string) (runs []flowcheck.Run, unended int, err error) {
	type run struct {
		flowcheck.Run
		ended bool
	}
	byRun := map[string]*run{} // by item and token: a token is its claim batch's
	var order []string
	rows, err := db.QueryContext(ctx, "SELECT item, token, event, flow_key, at FROM "+flowAudit(prefix).Name)
	if err != nil {
		return nil, 0, err
	}
	for rows.Next() {
		var item, token, event, key string
		var at any
		if err := rows.Scan(&item, &token, &event, &key, &at); err != nil {
			rows.Close()
			return nil, 0, err
		}
		t, err := d.ScanTime(at)
		if err != nil {
			rows.Close()
			return nil, 0, err
		}
		id := item + " " + token
		r := byRun[id]
		if r == nil {
			r = &run{Run: flowcheck.Run{Item: item, Key: key}}
			byRun[id] = r
			order = append(order, id)
		}
		if event == "start" {
			r.Start = t
		} else {
			r.End, r.ended = t, true
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	ends := map[string][]time.Time{}
	rows, err = db.QueryContext(ctx, "SELECT a.item_id, a.ended_at FROM "+migrations.NamesFor(prefix).Attempts+" a"+
		" WHERE EXISTS (SELECT 1 FROM "+migrations.NamesFor(prefix).Items+" i WHERE i.id = a.item_id AND i.flow_key IS NOT NULL)")
	if err != nil {
		return nil, 0, err
	}
	for rows.Next() {
		var id uuid.UUID
		var at any
		if err := rows.Scan(&id, &at); err != nil {
			rows.Close()
			return nil, 0, err
		}
		t, err := d.ScanTime(at)
		if err != nil {
			rows.Close()
			return nil, 0, err
		}
		ends[id.String()] = append(ends[id.String()], t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	for _, id := range order {
		r := byRun[id]
		if r.Start.IsZero() {
			return nil, 0, fmt.Errorf("flow audit: run %s has an end and no start", id)
		}
		if !r.ended {
			var ok bool
			if r.End, ok = flowcheck.EndOf(r.Start, ends[r.Item]); !ok {
				unended++
				continue
			}
		}
		runs = append(runs, r.Run)
	}
	return runs, unended, nil
}
