package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/plenumdb/plenum/internal/cmd/cmdline"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/pipeline"
	"github.com/plenumdb/plenum/worker"
)

// The demo's second part: a pipeline on the same store and runtime. An
// expand fans out over --orders orders; each order divides into pricing
// and stock branches, whose outputs a combine joins into an order line;
// the collapse totals the lines (read by keyset pages), and a last step
// writes the invoice.

type demoOrder struct {
	ID  int `json:"id"`
	Qty int `json:"qty"`
}

type demoLine struct {
	ID    int `json:"id"`
	Cents int `json:"cents"`
	Units int `json:"units"`
}

type demoTotals struct {
	Orders int `json:"orders"`
	Cents  int `json:"cents"`
	Units  int `json:"units"`
}

// demoOrders is the input's orders: order i of quantity i%5+1.
func demoOrders(_ context.Context, n int) ([]demoOrder, error) {
	out := make([]demoOrder, n)
	for i := range out {
		out[i] = demoOrder{ID: i, Qty: i%5 + 1}
	}
	return out, nil
}

// demoPriceCents is every unit's price.
const demoPriceCents = 250

// demoFlow is the demo's pipeline: orders -> expand(divide(price, stock)
// -> combine) -> collapse -> invoice.
func demoFlow() pipeline.Flow[int, string] {
	price := pipeline.Step("price", func(_ context.Context, o demoOrder) (demoLine, error) {
		return demoLine{ID: o.ID, Cents: o.Qty * demoPriceCents}, nil
	})
	stock := pipeline.Step("stock", func(_ context.Context, o demoOrder) (demoLine, error) {
		return demoLine{ID: o.ID, Units: o.Qty}, nil
	})
	line := pipeline.Divide("check", []pipeline.Flow[demoOrder, demoLine]{price, stock},
		func(_ context.Context, parts []demoLine) (demoLine, error) {
			return demoLine{ID: parts[0].ID, Cents: parts[0].Cents, Units: parts[1].Units}, nil
		})
	totals := pipeline.Expand("orders", demoOrders, line, func(ctx context.Context, r *pipeline.Results[demoLine]) (demoTotals, error) {
		var t demoTotals
		err := r.Each(ctx, func(l pipeline.Result[demoLine]) error {
			t.Orders, t.Cents, t.Units = t.Orders+1, t.Cents+l.Value.Cents, t.Units+l.Value.Units
			return nil
		})
		return t, err
	})
	invoice := pipeline.Step("invoice", func(_ context.Context, t demoTotals) (string, error) {
		return fmt.Sprintf("%s orders, %s units, %s cents", cmdline.Commas(t.Orders), cmdline.Commas(t.Units), cmdline.Commas(t.Cents)), nil
	})
	return pipeline.Then(totals, invoice)
}

// demoWant is the invoice the demo's pipeline must write for n orders.
func demoWant(n int) string {
	units := 0
	for i := range n {
		units += i%5 + 1
	}
	return fmt.Sprintf("%s orders, %s units, %s cents", cmdline.Commas(n), cmdline.Commas(units), cmdline.Commas(units*demoPriceCents))
}

// pipelineReport is what the demo's pipeline did.
type pipelineReport struct {
	Run     pipeline.Run
	Elapsed time.Duration
	Invoice string
	// Steps counts the run's step executions; Repeated those that took
	// more than one attempt.
	Steps, Repeated int
	Failed          []string
}

const demoPipelineQueue = "demo.pipeline"

// runDemoPipeline runs the demo's pipeline over orders orders on st,
// with its own worker, and prints two lines.
func runDemoPipeline(ctx context.Context, out io.Writer, st *core.Store, o demoOptions) (pipelineReport, error) {
	var rep pipelineReport
	p, err := pipeline.Define("orders", demoFlow())
	if err != nil {
		return rep, err
	}
	cfg := worker.Config{
		Queues:       map[string]worker.QueueConfig{demoPipelineQueue: {MaxWorkers: 4 * o.Workers}},
		PollInterval: 10 * time.Millisecond,
		// The runtime's own heartbeat and stale threshold, not the fan-out
		// part's (seconds, to show crashes reaped quickly): nothing crashes
		// here, and on a loaded machine so short a threshold can see a
		// slow heartbeat as a dead worker, which then stops itself.
		RetainFor: -1,
	}
	worker.FitPool(st, cfg)
	w, err := worker.New(st, cfg)
	if err != nil {
		return rep, err
	}
	eng, err := pipeline.New(st, w, pipeline.EngineOptions{Queue: demoPipelineQueue})
	if err == nil {
		err = eng.Register(p)
	}
	if err == nil {
		err = w.Start(ctx)
	}
	if err != nil {
		return rep, fmt.Errorf("demo: pipeline: %w", err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		_ = w.Stop(sctx)
	}()
	fmt.Fprintf(out, "\nPipeline %q: expand %s orders, each divided into price and stock, combined; collapse; invoice\n", p.Name(), cmdline.Commas(o.Orders))
	start := time.Now()
	run, err := eng.Trigger(ctx, p, o.Orders)
	if err != nil {
		return rep, fmt.Errorf("demo: pipeline: %w", err)
	}
	deadline := time.Now().Add(o.Timeout)
	for {
		r, err := st.GetRun(ctx, run)
		if err != nil {
			return rep, fmt.Errorf("demo: pipeline: %w", err)
		}
		if r.State != core.RunRunning && r.State != core.RunWaiting {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return rep, fmt.Errorf("demo: pipeline run %s still %s after %v", run, r.State, o.Timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
	rep.Elapsed = time.Since(start)
	if rep.Run, err = eng.Get(ctx, run); err != nil {
		return rep, fmt.Errorf("demo: pipeline: %w", err)
	}
	return checkPipeline(out, rep, o.Orders, run)
}

// checkPipeline checks the run's invariants and prints its line.
func checkPipeline(out io.Writer, rep pipelineReport, orders int, run uuid.UUID) (pipelineReport, error) {
	r := rep.Run
	rep.Steps = len(r.Steps)
	for _, s := range r.Steps {
		if s.Attempt != 1 {
			rep.Repeated++
		}
	}
	_ = json.Unmarshal(r.Output, &rep.Invoice) // an empty invoice fails below
	// Per order: the divide, two branches, the combine; then the expand,
	// the collapse and the invoice.
	wantSteps := 4*orders + 3
	switch {
	case r.State != pipeline.StateCompleted:
		rep.Failed = append(rep.Failed, fmt.Sprintf("the run ended %s, not completed", r.State))
	case rep.Invoice != demoWant(orders):
		rep.Failed = append(rep.Failed, fmt.Sprintf("the invoice says %q, want %q", rep.Invoice, demoWant(orders)))
	case rep.Steps != wantSteps:
		rep.Failed = append(rep.Failed, fmt.Sprintf("%d steps ran, want %d", rep.Steps, wantSteps))
	case rep.Repeated != 0:
		rep.Failed = append(rep.Failed, fmt.Sprintf("%d steps ran more than once", rep.Repeated))
	}
	fmt.Fprintf(out, "  run %s %s in %v: %s; %s steps, each once\n", run, r.State, rep.Elapsed.Round(time.Millisecond), rep.Invoice, cmdline.Commas(rep.Steps))
	if len(rep.Failed) > 0 {
		return rep, errors.New("demo: pipeline: " + rep.Failed[0])
	}
	return rep, nil
}
