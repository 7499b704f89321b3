package worker

import (
	"context"
	"fmt"
	"sync"

	"github.com/plenumdb/plenum/core"
)

// Metadata returns the tags and metadata the item was enqueued with
// (core.ItemSpec.Tags and Metadata): empty when it has none. Where a
// middleware asked for metadata (Middleware.Metadata), it is what the
// worker read for the whole claim; otherwise the first call reads it, in
// one statement (core.Store.ItemMetadata), and later calls return that
// read: an item's metadata does not change once it is enqueued. Safe for
// concurrent use.
func (j *Job[T]) Metadata(ctx context.Context) (core.Metadata, error) {
	r := j.r
	if r.metadata != nil {
		return r.metadata[r.claim.ID], nil
	}
	r.ownMeta.mu.Lock()
	defer r.ownMeta.mu.Unlock()
	if r.ownMeta.read {
		return r.ownMeta.md, nil
	}
	got, err := r.w.store.ItemMetadata(ctx, r.claim.ID)
	if err != nil {
		return core.Metadata{}, fmt.Errorf("plenum/worker: metadata of %s: %w", r.claim.ID, err)
	}
	r.ownMeta.md, r.ownMeta.read = got[r.claim.ID], true
	return r.ownMeta.md, nil
}

// jobMeta is a run's own read of its item's metadata, made by
// Job.Metadata where no middleware had the worker read it.
type jobMeta struct {
	mu   sync.Mutex
	read bool
	md   core.Metadata
}
