package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Flow is a part of a pipeline that takes an I and gives an O: a step, or
// steps composed by Then, Expand, Divide, Route and Await. Go checks the
// types where they meet: Then(a, b) compiles only if a's output is b's
// input. Inputs and outputs travel between steps as JSON, so I and O must
// survive encoding/json. A Flow is a description: it runs once registered
// with an Engine, through Define.
type Flow[I, O any] struct{ n *node }

// kind is what a node of a definition is.
type kind int

const (
	kindStep kind = iota
	kindChain
	kindExpand
	kindDivide
	kindRoute
	kindAwait
	kindWaitUntil
	kindRepeat
	kindSleep
)

func (k kind) String() string {
	return [...]string{"step", "chain", "expand", "divide", "route", "await", "wait", "repeat", "sleep"}[k]
}

// node is a Flow without its types: what Define validates and the engine
// runs. Every function takes and returns JSON.
type node struct {
	kind kind
	name string // every kind but chain
	opts StepOptions

	step  func(ctx context.Context, in json.RawMessage) (json.RawMessage, error)
	await func(ctx context.Context, in, signal json.RawMessage, timedOut bool) (json.RawMessage, error)
	// signal and timeout: what an await waits for, and how long.
	signal  string
	timeout time.Duration

	seq []*node // chain

	branches []*node // divide
	combine  func(ctx context.Context, outs []json.RawMessage) (json.RawMessage, error)

	choose func(ctx context.Context, in json.RawMessage) (string, error)
	routes map[string]*node

	// list (Expand) or source (ExpandStream): an expand's elements.
	list     func(ctx context.Context, in json.RawMessage) ([]json.RawMessage, error)
	source   func(ctx context.Context, in json.RawMessage, cursor string) (rawPage, error)
	body     *node
	collapse func(ctx context.Context, r *rawResults) (json.RawMessage, error)
	// maxFanout caps an expand's children; 0 takes Options.MaxFanout.
	maxFanout int

	// A WaitUntil's condition, its checks' schedule, its timeout and the
	// flow it takes then (nil: the run halts).
	cond      func(ctx context.Context, in json.RawMessage) (json.RawMessage, bool, error)
	every     Backoff
	waitFor   time.Duration
	onTimeout *node

	// A RepeatUntil's body, its schedule's interval and end, and its
	// rules for a downtime and for a failed repetition.
	repeat   func(ctx context.Context, in json.RawMessage, rep Repetition) (json.RawMessage, bool, error)
	interval time.Duration
	until    time.Duration
	catchUp  CatchUp
	onError  OnError

	// A Sleep's duration, or a SleepUntil's time of its input.
	sleepFor   time.Duration
	sleepUntil func(in json.RawMessage) (time.Time, error)

	// Set by Define, on its own copy of the tree.
	parent *node
	pos    int // index in the parent's seq or branches
	depth  int // fan-outs (expand, divide) enclosing the node
}

// StepOptions tune one step (or the items of an expand, divide, route or
// await: the one that fans out, chooses or waits, and the collapse or
// combine that fans in). Zero fields take the pipeline's Options. They
// apply wherever the step is: at the top of a pipeline, in an expand's
// children, in a divide's branches, in a route's flows.
type StepOptions struct {
	// MaxAttempts is how many times the step runs before its run halts
	// with ReasonAttemptsExhausted. Default: Options.MaxAttempts.
	MaxAttempts int
	// Timeout is how long one attempt of the step may run, counted from
	// its claim: its context ends then (less the worker's
	// Config.DeadlineMargin), and a result or a Fence after that is
	// refused by the database, on its clock, so nothing the late attempt
	// would have written commits; the attempt counts as failed, and the
	// step runs again after its Backoff while attempts are left. An
	// await's Timeout bounds each run of its function, not its wait for
	// the signal (Await's timeout). At most core.MaxLease. Default:
	// Options.Timeout.
	Timeout time.Duration
	// Delay postpones the step: its item becomes claimable that long (on
	// the database clock) after the step before it finished (or the run
	// was triggered, or its fan-out made it). Retries wait their Backoff,
	// not the Delay. For a fan-out, it postpones the fan-out, not its
	// fan-in. At most core.MaxDelay. Default: none.
	Delay time.Duration
	// Backoff is the wait before a failed attempt runs again. Default:
	// Options.Backoff.
	Backoff Backoff
	// FlowKey, when set, puts the step's items under flow control: it
	// gives each item the flow key (core.ItemSpec.FlowKey) of its input,
	// the step's input as JSON (FlowKeyFrom makes one from a function of
	// the typed input). The items of one key take turns with the other
	// keys' in the engine's queue and follow the key's limits
	// (core.Store.SetLimit), in every process: a concurrency limit on
	// the key bounds how many of them run at once. An empty key, or an
	// input that does not decode, puts the item under none. It keys the
	// step's item wherever it is made: at the trigger, after the step
	// before it, as a branch of a divide or an element of an expand. The
	// join of an expand or a divide (its collapse or combine) is a
	// barrier's join, which has no key: a FlowKey on an expand or divide
	// keys the item that fans out, not the one that fans in. Default:
	// none.
	FlowKey func(in json.RawMessage) string
	// RunFlowKey is FlowKey from the run's input rather than the step's:
	// a key the run was triggered with (a tenant, a customer) that the
	// step's input does not carry. The input is read as RunInput reads
	// it. At most one of FlowKey and RunFlowKey. Default: none.
	RunFlowKey func(run json.RawMessage) string
	// Cost is the claims of its key's rate limit each of the step's
	// items counts for (core.ItemSpec.Cost); only with FlowKey or
	// RunFlowKey. Default (0): 1.
	Cost int
}

// FlowKeyFrom makes a StepOptions.FlowKey or RunFlowKey of fn, a
// function of the typed input: the JSON is decoded as a T, and an input
// that does not decode has no key.
func FlowKeyFrom[T any](fn func(in T) string) func(json.RawMessage) string {
	return func(raw json.RawMessage) string {
		v, err := decode[T](raw)
		if err != nil {
			return ""
		}
		return fn(v)
	}
}

// Step is a flow of one step: fn computes the output from the input. A
// step runs at least once (again after a crash or a failed attempt):
// effects outside the database should be made idempotent with the key
// from Info(ctx).IdempotencyKey. An error is a failed attempt; Permanent
// halts the run at once.
func Step[I, O any](name string, fn func(ctx context.Context, in I) (O, error), opts ...StepOptions) Flow[I, O] {
	n := &node{kind: kindStep, name: name, opts: first(opts)}
	if fn != nil {
		n.step = func(ctx context.Context, raw json.RawMessage) (json.RawMessage, error) {
			in, err := decode[I](raw)
			if err != nil {
				return nil, Permanent(fmt.Errorf("step %q: decode its input as %T: %w", name, in, err))
			}
			out, err := fn(ctx, in)
			if err != nil {
				return nil, err
			}
			return encode(name, out)
		}
	}
	return Flow[I, O]{n}
}

// Then is first followed by next: next gets first's output. Chains nest
// and flatten, Then(Then(a, b), c) being the chain a, b, c.
func Then[A, B, C any](first Flow[A, B], next Flow[B, C]) Flow[A, C] {
	var seq []*node
	for _, f := range []*node{first.n, next.n} {
		if f != nil && f.kind == kindChain {
			seq = append(seq, f.seq...)
		} else {
			seq = append(seq, f)
		}
	}
	return Flow[A, C]{&node{kind: kindChain, seq: seq}}
}

// Route runs the flow that choose names for the input: the input goes to
// routes[name], whose output is the route's. A name with no route halts
// the run with ReasonNoRouteMatched.
func Route[I, O any](name string, choose func(ctx context.Context, in I) (string, error), routes map[string]Flow[I, O], opts ...StepOptions) Flow[I, O] {
	n := &node{kind: kindRoute, name: name, opts: first(opts), routes: map[string]*node{}}
	for k, f := range routes {
		n.routes[k] = f.n
	}
	if choose != nil {
		n.choose = func(ctx context.Context, raw json.RawMessage) (string, error) {
			in, err := decode[I](raw)
			if err != nil {
				return "", Permanent(fmt.Errorf("route %q: decode its input as %T: %w", name, in, err))
			}
			return choose(ctx, in)
		}
	}
	return Flow[I, O]{n}
}

// Await is a step that waits for the signal named signal of its run (see
// Engine.Signal) and then runs fn with the input and the signal's payload.
// A signal sent before the step waits is kept for it. With a timeout above
// zero, fn runs with timedOut set (and the zero S) once the wait has
// lasted that long without a signal.
func Await[I, S, O any](name, signal string, timeout time.Duration, fn func(ctx context.Context, in I, sig S, timedOut bool) (O, error), opts ...StepOptions) Flow[I, O] {
	n := &node{kind: kindAwait, name: name, opts: first(opts), signal: signal, timeout: timeout}
	if fn != nil {
		n.await = func(ctx context.Context, rawIn, rawSig json.RawMessage, timedOut bool) (json.RawMessage, error) {
			in, err := decode[I](rawIn)
			if err != nil {
				return nil, Permanent(fmt.Errorf("await %q: decode its input as %T: %w", name, in, err))
			}
			sig, err := decode[S](rawSig)
			if err != nil {
				return nil, Permanent(fmt.Errorf("await %q: decode signal %q as %T: %w", name, signal, sig, err))
			}
			out, err := fn(ctx, in, sig, timedOut)
			if err != nil {
				return nil, err
			}
			return encode(name, out)
		}
	}
	return Flow[I, O]{n}
}

func first(opts []StepOptions) StepOptions {
	if len(opts) > 0 {
		return opts[0]
	}
	return StepOptions{}
}

// decode reads raw JSON into a T; empty or null JSON gives the zero T.
func decode[T any](raw json.RawMessage) (T, error) {
	var v T
	if len(raw) == 0 || string(raw) == "null" {
		return v, nil
	}
	if p, ok := any(&v).(*json.RawMessage); ok {
		*p = append(json.RawMessage(nil), raw...)
		return v, nil
	}
	err := json.Unmarshal(raw, &v)
	return v, err
}

// encode writes a step's output as JSON.
func encode[T any](name string, v T) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, Permanent(fmt.Errorf("step %q: encode its output %T: %w", name, v, err))
	}
	return b, nil
}
