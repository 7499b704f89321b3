package pipeline

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/plenumdb/plenum/core"
)

// Options tune a pipeline. Zero fields take their defaults.
type Options struct {
	// MaxAttempts is how many times a step runs before its run halts with
	// ReasonAttemptsExhausted (StepOptions.MaxAttempts overrides it per
	// step). A step whose workers die while running it halts its run with
	// ReasonCrashesExhausted after the worker's Config.MaxCrashes. Default
	// 3.
	MaxAttempts int
	// MaxFanout caps the children of each expand (ExpandOptions.MaxFanout
	// overrides it per expand). Default 100,000.
	MaxFanout int
	// MaxDepth caps how deeply expands and divides nest. Default 8.
	MaxDepth int
	// Timeout is each step's deadline (worker.KindConfig.Timeout;
	// StepOptions.Timeout overrides it per step). Default: the worker's.
	Timeout time.Duration
	// Backoff is the wait before a step's failed attempt runs again
	// (StepOptions.Backoff overrides it per step). Default: the worker's
	// (worker.KindConfig.Backoff, or the store's).
	Backoff Backoff
	// Version numbers the definition among the versions of its pipeline
	// (its name). A run records the version it was triggered on, and
	// every step of the run runs on that version's definition: a program
	// that changes a pipeline gives the new definition a new version,
	// and registers the old one beside it (Engine.Register) until the
	// runs it started have ended. A step of a run whose version the
	// process does not register halts its run with
	// ReasonVersionNotRegistered; the run revives once the version is
	// registered again. From 1 to MaxVersion. Default (0): 1, the version
	// of every run triggered before versions were.
	Version int
}

// The defaults of Options.
const (
	DefaultMaxAttempts = 3
	DefaultMaxFanout   = 100_000
	DefaultMaxDepth    = 8
	// MaxNameLen bounds the names of pipelines and steps.
	MaxNameLen = 64
	// MaxVersion bounds Options.Version.
	MaxVersion = 1<<31 - 1
)

func (o Options) withDefaults() Options {
	if o.MaxAttempts == 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.MaxFanout == 0 {
		o.MaxFanout = DefaultMaxFanout
	}
	if o.MaxDepth == 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	if o.Version == 0 {
		o.Version = 1
	}
	return o
}

// Pipeline is a validated definition: a named flow from I to O, ready to
// register with an Engine (Engine.Register) and to trigger.
type Pipeline[I, O any] struct{ def *definition }

// Name returns the pipeline's name.
func (p *Pipeline[I, O]) Name() string { return p.def.name }

// Version returns the pipeline's version (Options.Version).
func (p *Pipeline[I, O]) Version() int { return p.def.version }

// Definition is what Engine.Register takes: a *Pipeline of any types.
type Definition interface {
	definition() *definition
}

// definition is nil for a nil Pipeline, which Register and the triggers
// refuse.
func (p *Pipeline[I, O]) definition() *definition {
	if p == nil {
		return nil
	}
	return p.def
}

// definition is a Pipeline without its types.
type definition struct {
	name    string
	version int
	root    *node
	opts    Options
	nodes   map[string]*node
	// checkInput tells whether JSON decodes as the pipeline's input type.
	checkInput func(raw []byte) error
}

// DefinitionError says what is wrong with a definition, and where.
type DefinitionError struct {
	// Pipeline is the definition's name.
	Pipeline string
	// Path locates the offending part: step names from the root down,
	// e.g. "orders > split > [2] > ship".
	Path string
	// Reason says what is wrong.
	Reason string
}

func (e *DefinitionError) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("plenum/pipeline: %q: %s", e.Pipeline, e.Reason)
	}
	return fmt.Sprintf("plenum/pipeline: %q at %s: %s", e.Pipeline, e.Path, e.Reason)
}

// ErrInvalidDefinition is what every DefinitionError matches with
// errors.Is.
var ErrInvalidDefinition = errors.New("plenum/pipeline: invalid definition")

// Is makes a DefinitionError match ErrInvalidDefinition.
func (e *DefinitionError) Is(target error) bool { return target == ErrInvalidDefinition }

// Define validates flow as the pipeline name and returns it, or every
// problem it finds, each a *DefinitionError (joined with errors.Join):
// names empty, too long, with characters other than letters, digits and
// "-_.", or used twice (a Flow can appear once per pipeline); missing
// functions; a chain, divide or route with nothing in it; nesting deeper
// than Options.MaxDepth; limits out of range.
func Define[I, O any](name string, flow Flow[I, O], opts ...Options) (*Pipeline[I, O], error) {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	o = o.withDefaults()
	v := &validator{pipeline: name, opts: o, nodes: map[string]*node{}}
	v.checkName("", "pipeline name", name)
	for _, c := range []struct {
		field string
		n     int
	}{{"MaxAttempts", o.MaxAttempts}, {"MaxFanout", o.MaxFanout}, {"MaxDepth", o.MaxDepth}} {
		if c.n < 1 {
			v.fail("", "Options.%s is %d: it must be at least 1", c.field, c.n)
		}
	}
	if o.Version < 1 || o.Version > MaxVersion {
		v.fail("", "Options.Version is %d: it must be within [1, %d]", o.Version, MaxVersion)
	}
	if o.Timeout < 0 || o.Timeout > core.MaxLease {
		v.fail("", "Options.Timeout is %v: it must be within [0, %v]", o.Timeout, core.MaxLease)
	}
	if r := o.Backoff.check(); r != "" {
		v.fail("", "Options.%s", r)
	}
	root := v.copy(flow.n, nil, 0, 0, name)
	if err := errors.Join(v.errs...); err != nil {
		return nil, err
	}
	return &Pipeline[I, O]{def: &definition{name: name, version: o.Version, root: root, opts: o, nodes: v.nodes,
		checkInput: func(raw []byte) error { _, err := decode[I](raw); return err }}}, nil
}

// validator copies a flow's tree (so that a Flow reused in two
// pipelines is two trees), linking parents and collecting problems.
type validator struct {
	pipeline string
	opts     Options
	nodes    map[string]*node
	errs     []error
}

func (v *validator) fail(path, format string, args ...any) {
	v.errs = append(v.errs, &DefinitionError{Pipeline: v.pipeline, Path: path, Reason: fmt.Sprintf(format, args...)})
}

func (v *validator) checkName(path, what, name string) bool {
	switch {
	case name == "":
		v.fail(path, "%s is empty", what)
	case len(name) > MaxNameLen:
		v.fail(path, "%s %q is longer than %d bytes", what, name, MaxNameLen)
	case strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	}) >= 0:
		v.fail(path, "%s %q has characters other than letters, digits and -_.", what, name)
	default:
		return true
	}
	return false
}

// copy validates n, found at path under parent, and returns its copy.
func (v *validator) copy(n, parent *node, pos, depth int, path string) *node {
	if n == nil {
		v.fail(path, "a zero Flow (made without Step, Then, Expand, Divide, Route, Await, WaitUntil, RepeatUntil or Sleep)")
		return nil
	}
	c := *n
	c.parent, c.pos, c.depth = parent, pos, depth
	if c.kind != kindChain {
		path = path + " > " + c.name
		if v.checkName(path, c.kind.String()+" name", c.name) {
			if v.nodes[c.name] != nil {
				v.fail(path, "name %q is used twice (a Flow can appear once per pipeline)", c.name)
			}
			v.nodes[c.name] = &c
		}
		if c.opts.MaxAttempts < 0 {
			v.fail(path, "MaxAttempts is negative")
		}
		v.checkPolicy(path, c.opts)
		v.checkFlow(path, c.opts)
	}
	missing := func(what string, nilFn bool) {
		if nilFn {
			v.fail(path, "%s is nil", what)
		}
	}
	switch c.kind {
	case kindStep:
		missing("the step's function", c.step == nil)
	case kindChain:
		if len(c.seq) == 0 {
			v.fail(path, "an empty chain")
		}
		c.seq = append([]*node(nil), c.seq...)
		for i, s := range c.seq {
			c.seq[i] = v.copy(s, &c, i, depth, path)
		}
	case kindRoute:
		missing("the route's choose function", c.choose == nil)
		if len(c.routes) == 0 {
			v.fail(path, "a route with no routes")
		}
		keys := make([]string, 0, len(c.routes))
		for k := range c.routes {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		c.routes = make(map[string]*node, len(keys))
		for _, k := range keys {
			if k == "" {
				v.fail(path, "a route named by the empty string")
			}
			c.routes[k] = v.copy(n.routes[k], &c, 0, depth, path+" > ["+k+"]")
		}
	case kindAwait:
		missing("the await's function", c.await == nil)
		v.checkName(path, "signal name", c.signal)
		if c.timeout < 0 {
			v.fail(path, "a negative timeout")
		}
	case kindWaitUntil:
		missing("the wait's condition", c.cond == nil)
		if c.every.Initial <= 0 {
			v.fail(path, "WaitOptions.Every.Initial must be above zero")
		} else if r := c.every.check(); r != "" {
			v.fail(path, "WaitOptions.Every%s", r[len("Backoff"):])
		}
		if c.waitFor < 0 {
			v.fail(path, "WaitOptions.Timeout is negative")
		}
		if n.onTimeout != nil {
			c.onTimeout = v.copy(n.onTimeout, &c, 0, depth, path+" > [timeout]")
		}
	case kindRepeat:
		v.checkRepeat(path, &c)
	case kindSleep:
		v.checkSleep(path, &c)
	case kindDivide:
		missing("the divide's combine function", c.combine == nil)
		if len(c.branches) == 0 {
			v.fail(path, "a divide with no branches")
		}
		v.deep(path, depth+1)
		c.branches = append([]*node(nil), c.branches...)
		for i, b := range c.branches {
			c.branches[i] = v.copy(b, &c, i, depth+1, fmt.Sprintf("%s > [%d]", path, i))
		}
	case kindExpand:
		missing("the expand's source", c.source == nil && c.list == nil)
		missing("the expand's collapse function", c.collapse == nil)
		if c.maxFanout < 0 {
			v.fail(path, "MaxFanout is negative")
		}
		if c.maxFanout == 0 {
			c.maxFanout = v.opts.MaxFanout
		}
		v.deep(path, depth+1)
		c.body = v.copy(n.body, &c, 0, depth+1, path+" > [each]")
	}
	return &c
}

func (v *validator) deep(path string, depth int) {
	if depth == v.opts.MaxDepth+1 {
		v.fail(path, "nests expands and divides %d deep, more than Options.MaxDepth (%d)", depth, v.opts.MaxDepth)
	}
}

// checkFlow checks a step's flow control options.
func (v *validator) checkFlow(path string, o StepOptions) {
	keyed := o.FlowKey != nil || o.RunFlowKey != nil
	switch {
	case o.FlowKey != nil && o.RunFlowKey != nil:
		v.fail(path, "StepOptions.FlowKey and RunFlowKey are both set: set one")
	case o.Cost < 0 || o.Cost > core.MaxCost:
		v.fail(path, "StepOptions.Cost is %d: it must be within [0, %d]", o.Cost, core.MaxCost)
	case o.Cost > 0 && !keyed:
		v.fail(path, "StepOptions.Cost is set without a FlowKey or RunFlowKey, whose rate limit it counts against")
	}
}

// checkPolicy checks a step's timeout, delay and backoff.
func (v *validator) checkPolicy(path string, o StepOptions) {
	if o.Timeout < 0 || o.Timeout > core.MaxLease {
		v.fail(path, "StepOptions.Timeout is %v: it must be within [0, %v]", o.Timeout, core.MaxLease)
	}
	if o.Delay < 0 || o.Delay > core.MaxDelay {
		v.fail(path, "StepOptions.Delay is %v: it must be within [0, %v]", o.Delay, core.MaxDelay)
	}
	if r := o.Backoff.check(); r != "" {
		v.fail(path, "StepOptions.%s", r)
	}
}

// checkRepeat checks a RepeatUntil's body and options.
func (v *validator) checkRepeat(path string, c *node) {
	if c.repeat == nil {
		v.fail(path, "the repeat's body is nil")
	}
	if c.interval <= 0 || c.interval > core.MaxDelay {
		v.fail(path, "RepeatOptions.Every is %v: it must be above zero and at most %v", c.interval, core.MaxDelay)
	}
	if c.until < 0 {
		v.fail(path, "RepeatOptions.Until is negative")
	}
	if c.catchUp != RunMissed && c.catchUp != SkipToLatest {
		v.fail(path, "RepeatOptions.CatchUp is %d: it must be RunMissed or SkipToLatest", c.catchUp)
	}
	if c.onError != HaltOnError && c.onError != ContinueOnError {
		v.fail(path, "RepeatOptions.OnError is %d: it must be HaltOnError or ContinueOnError", c.onError)
	}
}
