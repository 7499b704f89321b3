package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
)

// Kind is a kind of item bound to the type of its arguments, declared
// once and used on both sides of the queue: to register the handler
// (Kind.Handle, whose Job[T] decodes the payload into T) and to enqueue
// (Kind.Enqueue, EnqueueMany, EnqueueTx, Spec, which encode a T), so that
// the kind's name and its args type cannot drift apart between the code
// that enqueues and the code that handles.
//
//	var Welcome = worker.NewKind[WelcomeArgs]("email.welcome")
//
// It lives in worker, beside Handle, because a handler's registration is
// the runtime's; enqueueing needs only a core.Store, and worker imports
// nothing beyond core, so a program that only enqueues pays nothing for
// it. The untyped calls (Handle with a kind string, core.Store.Enqueue
// with a JSON payload) work as before, on the same items.
type Kind[T any] struct {
	name    string
	flowKey func(T) string
	codec   Codec
	// opts is how many KindOptions NewKind was given: more than one is
	// refused by every enqueue.
	opts int
}

// KindOptions tune the enqueues of a Kind. The zero value changes
// nothing.
type KindOptions[T any] struct {
	// FlowKey, when set, gives each item enqueued with args its flow key
	// (core.ItemSpec.FlowKey) from args, wherever EnqueueParams.FlowKey is
	// empty: in Enqueue, EnqueueMany, EnqueueTx and Spec. The items of one
	// key of one queue take turns with the other keys' and follow the
	// key's limits (core.Store.SetLimit), in every process. An empty key
	// puts the item under no flow control. Default: none.
	FlowKey func(args T) string
	// Codec, when set, seals the args of every item the kind enqueues
	// (Enqueue, EnqueueMany, EnqueueTx, Spec), bound to the kind's name,
	// and is the Codec of its handler (Kind.Handle), which opens them and
	// seals the results. A *seal.Keyring is one; declare the ring with
	// the kind and give it its keys at start-up (Keyring.Set), since the
	// kind is often a package-level variable. The flow key is computed
	// from the args before they are sealed, and is stored in clear.
	// Default: none.
	Codec Codec
}

// NewKind returns the kind named name whose items carry a T, encoded as
// JSON, tuned by at most one KindOptions (more is a mistake each enqueue
// refuses, naming the field). The name is checked where it is used: an
// empty one is refused by Handle and by every enqueue, naming the field.
func NewKind[T any](name string, opts ...KindOptions[T]) Kind[T] {
	// More than one is refused where the kind is used, not here: NewKind
	// serves package-level declarations, where an error has nowhere to go.
	k := Kind[T]{name: name, opts: len(opts)}
	if len(opts) == 1 {
		k.flowKey = opts[0].FlowKey
		k.codec = opts[0].Codec
	}
	return k
}

// Name returns the kind's name: the items' core.ItemSpec.Kind.
func (k Kind[T]) Name() string { return k.name }

// Handle registers fn as the handler of k's items on w, as Handle does.
func (k Kind[T]) Handle(w *Worker, fn func(ctx context.Context, job *Job[T]) error, cfg ...KindConfig) {
	Handle(w, k.name, fn, k.config(cfg)...)
}

// config is cfg with the kind's Codec where cfg sets none.
func (k Kind[T]) config(cfg []KindConfig) []KindConfig {
	if k.codec == nil || len(cfg) > 1 {
		return cfg // more than one is refused by the registration
	}
	c := KindConfig{}
	if len(cfg) == 1 {
		c = cfg[0]
	}
	if c.Codec == nil {
		c.Codec = k.codec
	}
	return []KindConfig{c}
}

// EnqueueParams say where and how items of a kind are enqueued: the
// fields of core.ItemSpec besides Kind and Payload, which the Kind and
// the args give. Each field means what the ItemSpec field of the same
// name does, with the same default and limits.
type EnqueueParams struct {
	// Queue is required.
	Queue string
	// Priority: lower numbers are claimed first. Default 0.
	Priority int
	// Delay postpones the first claim, counted on the database clock.
	// Default none.
	Delay time.Duration
	// MaxAttempts bounds the attempts that may fail before the item is
	// dead. Default (0): the store's Options.DefaultMaxAttempts.
	MaxAttempts int
	// Key makes the enqueue idempotent in the queue. Default none.
	// EnqueueMany refuses a Key for more than one item: enqueue items
	// with keys of their own through Spec and core.Store.Enqueue.
	Key string
	// KeyStates makes Key held only while its item is in these states
	// (core.ItemSpec.KeyStates): with {core.StateAvailable,
	// core.StateClaimed}, a key can be enqueued again once its item has
	// finished. Default nil: held while the item exists. Requires Key.
	KeyStates []core.State
	// KeyPeriod makes Key unique per period of the database clock
	// (core.ItemSpec.KeyPeriod): at most one item per key per hour, say.
	// Default none. Requires Key.
	KeyPeriod time.Duration
	// Run makes the item part of that run. Default none.
	Run uuid.UUID
	// FlowKey puts the item in its key's lane of the queue, under the
	// key's limits (core.Store.SetLimit); up to 200 characters. Default:
	// the kind's KindOptions.FlowKey of the args, if set; else none.
	FlowKey string
	// Cost is the claims of its key's rate limit the item counts for;
	// only with a flow key (this one or the kind's). Default (0): 1.
	Cost int
}

// Spec returns the core.ItemSpec that enqueues an item of k with args,
// for the calls that take specs: core.Fenced.Enqueue and Fenced.Then
// inside a fence, several kinds in one core.Store.Enqueue, a periodic
// job's Item. An args that does not encode as JSON is an error naming
// the kind and wrapping core.ErrInvalidInput and the encoder's error.
func (k Kind[T]) Spec(args T, p EnqueueParams) (core.ItemSpec, error) {
	return k.spec("args", args, p)
}

// spec is Spec, naming the args field in its errors.
func (k Kind[T]) spec(field string, args T, p EnqueueParams) (core.ItemSpec, error) {
	if k.name == "" {
		return core.ItemSpec{}, &core.InputError{Field: "Kind", Reason: "empty name (declare it with NewKind)"}
	}
	if k.opts > 1 {
		return core.ItemSpec{}, fmt.Errorf("plenum/worker: kind %q: %w", k.name,
			&core.InputError{Field: "KindOptions", Reason: fmt.Sprintf("NewKind was given %d, want at most one", k.opts)})
	}
	if p.Key == "" && (p.KeyStates != nil || p.KeyPeriod != 0) {
		field := "EnqueueParams.KeyStates"
		if p.KeyStates == nil {
			field = "EnqueueParams.KeyPeriod"
		}
		return core.ItemSpec{}, fmt.Errorf("plenum/worker: kind %q: %w", k.name, &core.InputError{Field: field, Reason: "set without a Key"})
	}
	b, err := json.Marshal(args)
	if err != nil {
		return core.ItemSpec{}, fmt.Errorf("plenum/worker: kind %q: encode %s (%T): %w: %w", k.name, field, args, core.ErrInvalidInput, err)
	}
	flowKey := p.FlowKey
	if flowKey == "" && k.flowKey != nil {
		flowKey = k.flowKey(args)
	}
	if b, err = sealArgs(k.codec, k.name, b); err != nil {
		return core.ItemSpec{}, fmt.Errorf("plenum/worker: kind %q: seal %s: %w", k.name, field, err)
	}
	if p.Cost != 0 && flowKey == "" {
		// core would name the spec's field; the caller set this one.
		return core.ItemSpec{}, fmt.Errorf("plenum/worker: kind %q: %w", k.name,
			&core.InputError{Field: "EnqueueParams.Cost", Reason: fmt.Sprintf("set for %s, which has no flow key (EnqueueParams.FlowKey, or the kind's KindOptions.FlowKey)", field)})
	}
	return core.ItemSpec{
		Queue: p.Queue, Kind: k.name, Payload: b, Priority: p.Priority, Delay: p.Delay,
		MaxAttempts: p.MaxAttempts, Key: p.Key, KeyStates: p.KeyStates, KeyPeriod: p.KeyPeriod, Run: p.Run, FlowKey: flowKey, Cost: p.Cost,
	}, nil
}

// Enqueue enqueues one item of k with args (core.Store.Enqueue). With a
// Key that an item of the queue already holds, the result is that item's
// (Existed).
func (k Kind[T]) Enqueue(ctx context.Context, store *core.Store, args T, p EnqueueParams) (core.EnqueueResult, error) {
	if store == nil {
		return core.EnqueueResult{}, k.nilStore()
	}
	spec, err := k.Spec(args, p)
	if err != nil {
		return core.EnqueueResult{}, err
	}
	res, err := store.Enqueue(ctx, spec)
	if err != nil {
		return core.EnqueueResult{}, fmt.Errorf("plenum/worker: enqueue kind %q: %w", k.name, err)
	}
	return res[0], nil
}

// EnqueueMany enqueues one item of k for each element of args, all with
// the params p, in one transaction (core.Store.Enqueue: batched to the
// dialect's limits). Results are in the order of args. An element that
// does not encode is an error naming its index, and nothing is enqueued.
func (k Kind[T]) EnqueueMany(ctx context.Context, store *core.Store, args []T, p EnqueueParams) ([]core.EnqueueResult, error) {
	if store == nil {
		return nil, k.nilStore()
	}
	specs, err := k.specs(args, p)
	if err != nil {
		return nil, err
	}
	res, err := store.Enqueue(ctx, specs...)
	if err != nil {
		return nil, fmt.Errorf("plenum/worker: enqueue kind %q: %w", k.name, err)
	}
	return res, nil
}

// EnqueueTx enqueues one item of k for each element of args inside the
// caller's transaction tx (core.Store.EnqueueTx: the outbox pattern, no
// retry, no wake-up of this process's workers until Store.Wake). Results
// are in the order of args.
func (k Kind[T]) EnqueueTx(ctx context.Context, store *core.Store, tx dialect.Querier, args []T, p EnqueueParams) ([]core.EnqueueResult, error) {
	if store == nil {
		return nil, k.nilStore()
	}
	specs, err := k.specs(args, p)
	if err != nil {
		return nil, err
	}
	res, err := store.EnqueueTx(ctx, tx, specs...)
	if err != nil {
		return nil, fmt.Errorf("plenum/worker: enqueue kind %q in the caller's transaction: %w", k.name, err)
	}
	return res, nil
}

// nilStore is the error of an enqueue given no store.
func (k Kind[T]) nilStore() error {
	return fmt.Errorf("plenum/worker: enqueue kind %q: %w", k.name, &core.InputError{Field: "store", Reason: "nil store"})
}

// specs is the ItemSpec of each element of args, with p.
func (k Kind[T]) specs(args []T, p EnqueueParams) ([]core.ItemSpec, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("plenum/worker: kind %q: %w", k.name, &core.InputError{Field: "args", Reason: "nothing to enqueue"})
	}
	if len(args) > 1 && p.Key != "" {
		return nil, fmt.Errorf("plenum/worker: kind %q: %w", k.name,
			&core.InputError{Field: "EnqueueParams.Key", Reason: fmt.Sprintf("one key for %d items would keep only the first; give each item its own key through Spec", len(args))})
	}
	specs := make([]core.ItemSpec, len(args))
	for i, a := range args {
		spec, err := k.spec(fmt.Sprintf("args[%d]", i), a, p)
		if err != nil {
			return nil, err
		}
		specs[i] = spec
	}
	return specs, nil
}
