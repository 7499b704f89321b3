package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
)

// Info describes the step a function runs in: Info(ctx) in a step,
// route, await, combine or collapse function.
type Info struct {
	Run      uuid.UUID
	Pipeline string
	Step     string
	// Attempt is this run of the step, 1 for the first.
	Attempt int
	// IdempotencyKey is the key for the step's effects outside the
	// database: the same in every attempt of this step of this run
	// (after a retry, a crash or a revive), and no other step's.
	IdempotencyKey string
}

type infoKey struct{}

// StepInfo returns the Info of the step ctx runs, if it is one's.
func StepInfo(ctx context.Context) (Info, bool) {
	i, ok := ctx.Value(infoKey{}).(Info)
	return i, ok
}

// job is one item's run: what every part of the handler needs.
type job struct {
	e   *Engine
	def *definition
	w   *worker.Job[json.RawMessage]
	env envelope
	n   *node
}

// execute is the handler of every item of def.
func (e *Engine) execute(ctx context.Context, def *definition, wj *worker.Job[json.RawMessage]) error {
	var env envelope
	if err := json.Unmarshal(wj.Args, &env); err != nil {
		return worker.Discard(fmt.Errorf("plenum/pipeline: %q: item %s is not a pipeline item: %w", def.name, wj.ID(), err))
	}
	if env.Role == roleNotice {
		return e.notify(ctx, env)
	}
	j := &job{e: e, def: def, w: wj, env: env, n: def.nodes[env.Node]}
	if j.n == nil {
		return j.halt(ctx, ReasonInvalidDefinition, fmt.Sprintf("pipeline %q has no step %q", def.name, env.Node))
	}
	it := wj.Item()
	max := maxAttempts(def, j.n)
	switch {
	case it.CrashCount >= def.opts.MaxCrashes:
		return j.halt(ctx, ReasonCrashesExhausted, fmt.Sprintf("its workers died %d times running it", it.CrashCount))
	case it.Attempt > max:
		return j.halt(ctx, ReasonAttemptsExhausted, fmt.Sprintf("%d attempts used (the last one timed out): %s", max, it.LastError))
	}
	ctx = context.WithValue(ctx, infoKey{}, Info{Run: env.Run, Pipeline: def.name, Step: j.n.name, Attempt: it.Attempt, IdempotencyKey: wj.IdempotencyKey()})
	err := j.run(ctx)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil || errors.Is(err, core.ErrClaimLost) {
		return err // the worker knows what a cut-short run means
	}
	if isPermanent(err) || it.Attempt >= max {
		return j.halt(ctx, ReasonAttemptsExhausted, err.Error())
	}
	return err
}

// run does the item's work for its node and role.
func (j *job) run(ctx context.Context) error {
	n, in := j.n, j.env.In
	switch {
	case j.env.Role == roleCollapse:
		return j.collapse(ctx)
	case j.env.Role == roleCombine:
		return j.combine(ctx)
	case n.kind == kindStep:
		out, err := call(func() (json.RawMessage, error) { return n.step(ctx, in) })
		if err != nil {
			return err
		}
		return j.advance(ctx, out)
	case n.kind == kindRoute:
		return j.route(ctx)
	case n.kind == kindDivide:
		return j.divide(ctx)
	case n.kind == kindExpand:
		return j.expand(ctx)
	case n.kind == kindAwait:
		return j.await(ctx)
	}
	return fmt.Errorf("plenum/pipeline: node %q of kind %v in role %q", n.name, n.kind, j.env.Role)
}

// call runs fn, turning a panic into an error with its stack.
func call[T any](fn func() (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n\n%s", p, debug.Stack())
		}
	}()
	return fn()
}

// advance hands the node's output to what follows it.
func (j *job) advance(ctx context.Context, out json.RawMessage) error {
	if err := j.w.SetResult(out); err != nil {
		return err
	}
	a := next(j.n)
	switch {
	case a.start != nil:
		return j.start(ctx, a.start, out, out)
	case a.finish:
		return j.w.Fence(ctx, func(ctx context.Context, f *core.Fenced) error {
			return finishRun(ctx, f, j.env.Run, out)
		})
	}
	return nil // a branch's end: completing the item counts it at its barrier
}

// start completes the item with result and enqueues the item that runs
// n with input in, in its place at its barrier: one fenced transaction.
func (j *job) start(ctx context.Context, n *node, in, result json.RawMessage) error {
	spec, err := j.e.spec(j.def, envelope{Run: j.env.Run, Node: n.name, In: in, Idx: j.env.Idx}, n)
	if err != nil {
		return err
	}
	if err := j.w.SetResult(result); err != nil {
		return err
	}
	return j.w.Fence(ctx, func(ctx context.Context, f *core.Fenced) error {
		return then(ctx, f, spec, result)
	})
}

// route runs the route's choice and starts the chosen flow.
func (j *job) route(ctx context.Context) error {
	key, err := call(func() (string, error) { return j.n.choose(ctx, j.env.In) })
	if err != nil {
		return err
	}
	target := j.n.routes[key]
	if target == nil {
		return j.halt(ctx, ReasonNoRouteMatched, fmt.Sprintf("the choice %q names no route", key))
	}
	choice, _ := json.Marshal(map[string]string{"route": key})
	return j.start(ctx, entry(target), j.env.In, choice)
}

// halt halts the run for reason, parks the item (its attempt recorded,
// not dead: the barrier above keeps waiting) and enqueues the notice that
// delivers the halt to Config.OnHalt, all in one fenced transaction.
func (j *job) halt(ctx context.Context, reason Reason, detail string) error {
	h := Halt{ID: uuid.Must(uuid.NewV7()), Run: j.env.Run, Pipeline: j.def.name, Step: j.env.Node, Reason: reason, Error: detail, At: time.Now().UTC()}
	payload, err := json.Marshal(envelope{Run: j.env.Run, Node: j.env.Node, Role: roleNotice, In: mustMarshal(h), Halt: h.ID})
	if err != nil {
		return err
	}
	notice := core.ItemSpec{Queue: j.e.cfg.Queue, Kind: kindPrefix + j.def.name, Payload: payload, Key: "halt:" + h.ID.String()}
	err = j.w.Settle(ctx, func(ctx context.Context, f *core.Fenced) error {
		return haltRun(ctx, f, h, notice)
	})
	return err
}

func mustMarshal(v any) json.RawMessage {
	b, _ := json.Marshal(v) // package types of plain fields only
	return b
}
