package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/worker"
)

// EngineOptions configure an Engine.
type EngineOptions struct {
	// Queue is the queue every item of the engine's pipelines goes to.
	// It must be one of the worker's Config.Queues. Required.
	Queue string
	// OnHalt is called after a run halted (the halt committed), outside
	// any transaction, at least once per halt: it can be called again
	// with the same Halt.ID (after a crash, or when it returned an error,
	// which makes it run again after a backoff), so deduplicate by that
	// id. Default: none.
	OnHalt func(ctx context.Context, h Halt) error
	// Codec, when set, seals the data of every run of the engine's
	// pipelines at rest: the run's input and output, each step's input
	// (in its item's payload, whose other members, the run, node, role,
	// fan-out position, stay clear for the dashboard) and output (its
	// item's result), the children of a fan-out (their inputs), the
	// run's context values, and the signals sent through Signal. Each is
	// bound to its pipeline's name and its place in the run (a signal to
	// its run and name), so a sealed value moved elsewhere does not open.
	// A *seal.Keyring is one. A value that does not open (sealed with a
	// key id the ring no longer holds, tampered with, or a signal sent
	// unsealed, straight through core.Store.Signal) fails its step at
	// once, which halts the run (ReasonAttemptsExhausted, as a Permanent
	// error does); once the key is back in the ring, Revive runs it
	// again. Not sealed: the names of steps, signals and context keys,
	// flow keys, a route's choice, errors, halts' details, and progress
	// (SetProgress's partial output, which the step writes as it is).
	// Get and Wait show each value opened where the engine can open it,
	// else as stored. Every process that runs, triggers or signals the
	// pipelines needs the same ring. Default: none.
	Codec worker.Codec
}

// Engine runs pipelines on a worker: it registers one handler per
// pipeline, and triggers, inspects, signals, cancels and revives runs.
// Every process that runs the pipelines registers the same definitions.
type Engine struct {
	store *core.Store
	w     *worker.Worker
	cfg   EngineOptions

	mu sync.Mutex
	// defs are the registered definitions, by name, then by version.
	defs map[string]map[int]*definition
	// inputs keeps the inputs of runs read by RunInput.
	inputs inputCache
}

// New returns an engine that runs pipelines on w, whose store is store.
func New(store *core.Store, w *worker.Worker, cfg EngineOptions) (*Engine, error) {
	switch {
	case store == nil:
		return nil, errors.New("plenum/pipeline: nil store")
	case w == nil:
		return nil, errors.New("plenum/pipeline: nil worker")
	case cfg.Queue == "":
		return nil, errors.New("plenum/pipeline: EngineOptions.Queue is empty")
	}
	e := &Engine{store: store, w: w, cfg: cfg, defs: map[string]map[int]*definition{}}
	w.HandleFunc(haltKind, func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
		return e.notify(ctx, job)
	})
	return e, nil
}

// kindPrefix begins the kind of every item of a pipeline; haltKind is
// the kind of the items that deliver halts to EngineOptions.OnHalt.
const (
	kindPrefix = "pipeline:"
	haltKind   = "pipeline.halt"
)

// Register makes the engine run defs: it registers one handler with the
// worker per pipeline name, so it must come before the worker's Start.
//
// Several versions of one pipeline (Options.Version) are registered
// together, in one call: each run goes on with the version it was
// triggered on, so a program that changes a pipeline while runs of it
// are under way keeps registering the versions those runs started on
// until they end. A name registered by an earlier call, and a name and
// version given twice, are refused, and then nothing is registered.
func (e *Engine) Register(defs ...Definition) error {
	if len(defs) == 0 {
		return errors.New("plenum/pipeline: Register: no definition")
	}
	byName := map[string]map[int]*definition{}
	var names []string
	for _, d := range defs {
		if d == nil || d.definition() == nil {
			return errors.New("plenum/pipeline: Register: nil definition")
		}
		def := d.definition()
		if byName[def.name] == nil {
			byName[def.name] = map[int]*definition{}
			names = append(names, def.name)
		}
		if byName[def.name][def.version] != nil {
			return fmt.Errorf("plenum/pipeline: Register: pipeline %q version %d given twice", def.name, def.version)
		}
		byName[def.name][def.version] = def
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, name := range names {
		if e.defs[name] != nil {
			return fmt.Errorf("plenum/pipeline: pipeline %q registered twice (register all its versions in one call)", name)
		}
	}
	for _, name := range names {
		versions := byName[name]
		e.defs[name] = versions
		kc := kindConfig(versions, e.w.DefaultTimeout())
		e.w.HandleFunc(kindPrefix+name, func(ctx context.Context, job *worker.Job[json.RawMessage]) error {
			return e.execute(ctx, name, versions, job)
		}, kc...)
	}
	return nil
}

// lookup returns the registered definition of d, or an error.
func (e *Engine) lookup(d Definition) (*definition, error) {
	if d == nil || d.definition() == nil {
		return nil, errors.New("plenum/pipeline: nil definition")
	}
	def := d.definition()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.defs[def.name][def.version] != def {
		return nil, fmt.Errorf("plenum/pipeline: pipeline %q version %d is not registered with this engine", def.name, def.version)
	}
	return def, nil
}

// envelope is the payload of every item of a run: the node it runs, in
// which role, what the node does, its input, and where in its fan-out it
// is. Its node, role and op are also read by the dashboard, whose test
// runs a pipeline to keep them the same.
type envelope struct {
	Run uuid.UUID `json:"run"`
	// V is the version of the pipeline's definition the run started on
	// (Options.Version), which runs the item; none for version 1, as
	// items made before versions were have.
	V    int    `json:"v,omitempty"`
	Node string `json:"node"`
	Role role   `json:"role,omitempty"`
	// Op is what the node does, for the item that runs it (Role ""):
	// step, route, await, expand, divide, wait, repeat or sleep. Nothing reads it back to run
	// the item; it labels the item for readers of the store (the
	// dashboard's run tree, which reads node, role and op).
	Op string          `json:"op,omitempty"`
	In json.RawMessage `json:"in,omitempty"`
	// Idx is the position of the branch (of a divide) or element (of an
	// expand) the item belongs to, passed on along chains: the join reads
	// it to put outputs in order.
	Idx int `json:"idx,omitempty"`
	// Path is the positions of the fan-outs the item is inside, from the
	// root ("" at the top, "3", "3.1", ...): with the node, it names the
	// step's execution in its run, the same however often it runs.
	Path string `json:"path,omitempty"`
	// Rep is the repetition a RepeatUntil's item runs, and the last
	// output one gave; none for its first.
	Rep *repeatState `json:"rep,omitempty"`
	// From is the item of the step whose completion started this one in
	// its chain, for PreviousProgress; none for the others.
	From uuid.UUID `json:"from,omitzero"`
}

// role is what an item does for its node.
type role string

const (
	roleRun      role = ""         // run the node: a step, await, route, or a fan-out
	roleCollapse role = "collapse" // the join of an expand
	roleCombine  role = "combine"  // the join of a divide
)

// spec is the item of env, which runs n, in the run whose input run
// returns (read only for a RunFlowKey).
func (e *Engine) spec(def *definition, env envelope, n *node, run func() (json.RawMessage, error)) (core.ItemSpec, error) {
	if env.Role == roleRun && n != nil {
		env.Op = n.kind.String()
	}
	env.V = 0
	if def.version != 1 {
		env.V = def.version
	}
	in := env.In // the flow key's, in clear
	var err error
	if env.In, err = e.seal(sealAAD(def.name, sealIn), env.In); err != nil {
		return core.ItemSpec{}, fmt.Errorf("plenum/pipeline: %q: the input of %q: %w", def.name, env.Node, err)
	}
	if env.Rep != nil && len(env.Rep.Out) > 0 {
		rep := *env.Rep
		if rep.Out, err = e.seal(sealAAD(def.name, sealIn), rep.Out); err != nil {
			return core.ItemSpec{}, fmt.Errorf("plenum/pipeline: %q: the last output of %q: %w", def.name, env.Node, err)
		}
		env.Rep = &rep
	}
	b, err := json.Marshal(env)
	if err != nil {
		return core.ItemSpec{}, fmt.Errorf("plenum/pipeline: %q: encode the item of %q: %w", def.name, env.Node, err)
	}
	spec := core.ItemSpec{Queue: e.cfg.Queue, Kind: kindPrefix + def.name, Payload: b, MaxAttempts: maxAttempts(def, n)}
	if env.Role == roleRun && n != nil {
		// A join (Role collapse or combine) is a barrier's, which has no
		// flow key.
		if spec.FlowKey, err = flowKey(n, in, run); err != nil {
			return core.ItemSpec{}, fmt.Errorf("plenum/pipeline: %q: the flow key of %q: %w", def.name, env.Node, err)
		}
		if spec.FlowKey != "" {
			spec.Cost = n.opts.Cost
		}
		spec.Delay = n.opts.Delay
	}
	return spec, nil
}

// flowKey is the flow key of n's item, whose input is in, in the run
// whose input run returns.
func flowKey(n *node, in json.RawMessage, run func() (json.RawMessage, error)) (string, error) {
	switch o := n.opts; {
	case o.FlowKey != nil:
		return o.FlowKey(in), nil
	case o.RunFlowKey != nil:
		raw, err := run()
		if err != nil {
			return "", err
		}
		return o.RunFlowKey(raw), nil
	}
	return "", nil
}

// maxAttempts is how many attempts n's step gets before its run halts.
func maxAttempts(def *definition, n *node) int {
	if n != nil && n.opts.MaxAttempts > 0 {
		return n.opts.MaxAttempts + extraAttempts(n)
	}
	return def.opts.MaxAttempts + extraAttempts(n)
}
