package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strconv"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
)

// Info describes the step a function runs in: Info(ctx) in a step,
// route, await, combine or collapse function.
type Info struct {
	Run      uuid.UUID
	Pipeline string
	// Version is the version of the pipeline's definition the run
	// started on, which runs the step (Options.Version).
	Version int
	Step    string
	// Attempt is this run of the step, 1 for the first.
	Attempt int
	// IdempotencyKey is the key for the step's effects outside the
	// database: the same in every attempt of this step of this run
	// (after a retry, a crash or a revive), and no other step's. In a
	// RepeatUntil's body it names the repetition: the same in every
	// attempt of it, and no other repetition's.
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
	// fences are what the node's function gave Fence, run in the
	// transaction that completes the item.
	fences []func(ctx context.Context, f *core.Fenced) error
	// listed is an Expand's list, once read.
	listed []json.RawMessage
	// sets are the function's SetRunContext writes, by key, in setOrder,
	// written last in the transaction that completes the item.
	sets     map[string]json.RawMessage
	setOrder []string
	// runContext is the run's context as first read (RunContext).
	runContext map[string]json.RawMessage
}

type jobKey struct{}

// Fence makes fn run in the transaction that completes the step ctx runs
// (and starts what follows it): what fn writes through f commits
// together with the step's completion, once, or not at all, even when
// the step itself runs again after a crash. Call it from the function of
// a step, an await, a combine or a collapse, before it returns; fn may
// run more than once if the transaction is retried, so it must touch
// nothing but f. Elsewhere it returns an error.
func Fence(ctx context.Context, fn func(ctx context.Context, f *core.Fenced) error) error {
	j, _ := ctx.Value(jobKey{}).(*job)
	switch {
	case fn == nil:
		return errors.New("plenum/pipeline: Fence: nil function")
	case j == nil:
		return errors.New("plenum/pipeline: Fence: not called from a step, await, combine or collapse function")
	}
	j.fences = append(j.fences, fn)
	return nil
}

// execute is the handler of every item of the pipeline name, whose
// registered definitions are versions: it runs the item on the version
// its run started on, and refuses, halting the run, an item of a version
// not registered (or of a step that version does not have), rather than
// run it on another version's definition.
func (e *Engine) execute(ctx context.Context, name string, versions map[int]*definition, wj *worker.Job[json.RawMessage]) error {
	var env envelope
	if err := json.Unmarshal(wj.Args, &env); err != nil {
		return worker.Discard(fmt.Errorf("plenum/pipeline: %q: item %s is not a pipeline item: %w", name, wj.ID(), err))
	}
	v := max(env.V, 1)
	def := versions[v]
	j := &job{e: e, def: def, w: wj, env: env}
	if def == nil {
		return j.halt(ctx, ReasonVersionNotRegistered, fmt.Sprintf("pipeline %q version %d, which the run started on, is not registered (registered: %s): its step %q cannot run; register that version and revive the run",
			name, v, versionList(versions), env.Node))
	}
	if err := e.openEnvelope(def, &env); err != nil {
		return worker.Discard(fmt.Errorf("plenum/pipeline: %q: the input of step %q (item %s): %w", def.name, env.Node, wj.ID(), err))
	}
	j.env = env
	if j.n = def.nodes[env.Node]; j.n == nil {
		return j.halt(ctx, ReasonInvalidDefinition, fmt.Sprintf("pipeline %q version %d has no step %q", name, v, env.Node))
	}
	ctx = context.WithValue(ctx, infoKey{}, Info{Run: wj.Item().Run, Pipeline: def.name, Version: v, Step: j.n.name,
		Attempt: wj.Attempt(), IdempotencyKey: j.idempotencyKey()})
	ctx = context.WithValue(ctx, runInputKey{}, j)
	err := j.run(ctx)
	if isPermanent(err) {
		return worker.Discard(err) // dead at once: the run halts
	}
	return err // a failed attempt: retried, or the run halts once they are used up
}

// versionList lists the versions registered, in order: "1, 3".
func versionList(versions map[int]*definition) string {
	vs := make([]int, 0, len(versions))
	for v := range versions {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	out := ""
	for i, v := range vs {
		if i > 0 {
			out += ", "
		}
		out += strconv.Itoa(v)
	}
	return out
}

// idempotencyKey names the item's execution of its node in its run: run,
// node, role and fan-out path, which no retry, crash, revive or re-armed
// barrier changes.
func (j *job) idempotencyKey() string {
	k := j.w.Item().Run.String() + "/" + j.env.Node
	if j.env.Role != roleRun {
		k += "/" + string(j.env.Role)
	}
	if j.env.Path != "" {
		k += "@" + j.env.Path
	}
	return k
}

// runIn returns the reader of the job's run's input, for the flow keys
// of the items it makes (StepOptions.RunFlowKey).
func (j *job) runIn(ctx context.Context) func() (json.RawMessage, error) {
	return func() (json.RawMessage, error) { return j.runInput(ctx) }
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
		out, err := call(func() (json.RawMessage, error) { return n.step(context.WithValue(ctx, jobKey{}, j), in) })
		if err != nil {
			return err
		}
		return j.advance(ctx, out, nil)
	case n.kind == kindRoute:
		return j.route(ctx)
	case n.kind == kindDivide:
		return j.divide(ctx)
	case n.kind == kindExpand:
		return j.expand(ctx)
	case n.kind == kindAwait:
		return j.await(ctx)
	case n.kind == kindWaitUntil:
		return j.waitUntil(context.WithValue(ctx, jobKey{}, j))
	case n.kind == kindRepeat:
		return j.repeat(ctx)
	case n.kind == kindSleep:
		return j.sleep(ctx)
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

// advance hands the node's output to what follows it. also, when set,
// runs in the transaction that completes the item (an await takes its
// signal there).
func (j *job) advance(ctx context.Context, out json.RawMessage, also func(ctx context.Context, f *core.Fenced) error) error {
	result, err := j.e.seal(sealAAD(j.def.name, sealOut), out)
	if err != nil {
		return err
	}
	if err := j.w.SetResult(result); err != nil {
		return err
	}
	a := next(j.n)
	var fn func(ctx context.Context, f *core.Fenced) error
	switch {
	case a.start != nil:
		spec, err := j.e.spec(j.def, envelope{Node: a.start.name, In: out, Idx: j.env.Idx, Path: j.env.Path, From: j.w.ID()}, a.start, j.runIn(ctx))
		if err != nil {
			return err
		}
		fn = func(ctx context.Context, f *core.Fenced) error {
			_, err := f.Then(ctx, spec, result)
			return err
		}
	case a.finish:
		output, err := j.e.seal(sealAAD(j.def.name, sealOutput), out)
		if err != nil {
			return err
		}
		fn = func(ctx context.Context, f *core.Fenced) error {
			_, _, err := f.UpdateRun(ctx, core.RunUpdate{Run: j.w.Item().Run, From: []core.RunState{core.RunRunning, core.RunWaiting}, To: core.RunCompleted, Output: output})
			return err
		}
	case also == nil && len(j.fences) == 0 && len(j.sets) == 0:
		return nil // a branch's end: completing the item counts it at its barrier
	}
	body := func(ctx context.Context, f *core.Fenced) error {
		if also != nil {
			if err := also(ctx, f); err != nil {
				return err
			}
		}
		for _, fence := range j.fences {
			if err := fence(ctx, f); err != nil {
				return err
			}
		}
		if fn == nil {
			return nil
		}
		return fn(ctx, f)
	}
	if len(j.sets) == 0 {
		return j.w.Fence(ctx, body)
	}
	// The run context's writes lock the run's row: after the item's
	// completion, which locks its barrier (runs are locked last).
	return j.w.Settle(ctx, func(ctx context.Context, f *core.Fenced) error {
		if err := body(ctx, f); err != nil {
			return err
		}
		if err := f.Complete(ctx, result); err != nil {
			return err
		}
		return j.writeContext(ctx, f)
	})
}

// route runs the route's choice and starts the chosen flow in the
// item's place.
func (j *job) route(ctx context.Context) error {
	key, err := call(func() (string, error) { return j.n.choose(ctx, j.env.In) })
	if err != nil {
		return err
	}
	target := j.n.routes[key]
	if target == nil {
		return j.halt(ctx, ReasonNoRouteMatched, fmt.Sprintf("the choice %q names no route", key))
	}
	first := entry(target)
	spec, err := j.e.spec(j.def, envelope{Node: first.name, In: j.env.In, Idx: j.env.Idx, Path: j.env.Path}, first, j.runIn(ctx))
	if err != nil {
		return err
	}
	choice, err := json.Marshal(map[string]string{"route": key})
	if err != nil {
		return err
	}
	if err := j.w.SetResult(choice); err != nil {
		return err
	}
	return j.w.Fence(ctx, func(ctx context.Context, f *core.Fenced) error {
		_, err := f.Then(ctx, spec, choice)
		return err
	})
}

// halt makes the item dead and halts its run for reason, in one fenced
// transaction that also enqueues the item delivering the halt to
// EngineOptions.OnHalt.
func (j *job) halt(ctx context.Context, reason Reason, detail string) error {
	return j.w.Settle(ctx, func(ctx context.Context, f *core.Fenced) error {
		_, err := f.Halt(ctx, core.HaltParams{Reason: string(reason), Detail: detail, Error: string(reason) + ": " + detail})
		return err
	})
}
