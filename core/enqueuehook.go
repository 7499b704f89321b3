package core

import (
	"context"
	"fmt"
	"maps"
	"slices"
)

// EnqueueHook is called for every item the store is about to insert, on
// every path (Enqueue, EnqueueTx, Fenced.Enqueue, Fenced.Then, a barrier's
// children, a run's first items, schedules' ticks, a run's halt item),
// with the context of the call that inserts it, and returns metadata
// entries to add to the item's (nil for none). It is how tracing puts the
// enqueuing span's context into the item (see the otelplenum module)
// without the core knowing about tracing.
//
// The entries the hook returns are merged into the item's metadata: a
// key the caller set keeps the caller's value. The merged metadata must
// meet the rules every item's metadata meets (ItemSpec.Metadata): one
// that does not fails the enqueue with an *InputError naming the item
// and the hook, and nothing is enqueued; no entry is dropped silently.
//
// A hook must be quick, safe for concurrent use, and must not call the
// store: it runs inside the enqueue's transaction. It may be called more
// than once for one item, when the transaction is tried again after a
// transient error. A barrier's join item is the exception: it is enqueued
// by whichever transaction finishes the barrier's last child, in no
// caller's context, and the hook is not called for it.
type EnqueueHook func(ctx context.Context, e Enqueuing) map[string]string

// Enqueuing describes an item about to be inserted, for an EnqueueHook.
type Enqueuing struct {
	// Queue and Kind are the item's.
	Queue, Kind string
	// Metadata is what the caller set on the item; the hook must not
	// change it.
	Metadata map[string]string
}

// hookSpecs returns specs with the entries of the store's enqueue hook
// merged into each one's metadata: specs itself when there is no hook,
// a copy otherwise (specs may be the caller's slice).
func (s *Store) hookSpecs(ctx context.Context, specs []ItemSpec) ([]ItemSpec, error) {
	hook := s.opts.OnEnqueue
	if hook == nil {
		return specs, nil
	}
	out := slices.Clone(specs)
	for i := range out {
		sp := &out[i]
		add := hook(ctx, Enqueuing{Queue: sp.Queue, Kind: sp.Kind, Metadata: sp.Metadata})
		if len(add) == 0 {
			continue
		}
		md := maps.Clone(add)
		maps.Copy(md, sp.Metadata)
		sp.Metadata = md
		if err := validMeta(fmt.Sprintf("Options.OnEnqueue's entries for item %d of the call: ", i), sp.Tags, md); err != nil {
			return nil, err
		}
	}
	return out, nil
}
