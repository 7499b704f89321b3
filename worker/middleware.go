package worker

import (
	"context"

	"github.com/google/uuid"
	"github.com/plenumdb/plenum/core"
)

// HandlerFunc is a handler as middleware sees it: one call of a kind's
// handler on the items of c (one for a kind registered with Handle, a
// batch for one registered with HandleBatch). It returns what the
// handler returned.
type HandlerFunc func(ctx context.Context, c *Call) error

// Middleware wraps the call of every handler the worker runs, plain and
// batch alike, in the goroutine that runs it: the place for what must
// surround a handler and see its context and error, such as a tracing
// span (the adapter in otelplenum) or a log line per attempt. Wrap gets
// the next function in the chain and returns the one to call instead;
// the function it returns must call next at most once, with a context
// derived from the one it got (the handler's, which ends at the run's
// deadline), and return next's error or its own. A middleware that
// returns without calling next makes its error the handler's.
//
// Config.Middleware lists them outermost first. A panic in a middleware
// is the handler's panic (a *PanicError).
type Middleware struct {
	// Wrap returns the function called in place of next. Required.
	Wrap func(next HandlerFunc) HandlerFunc
	// Metadata asks the worker to read the metadata of the items it
	// claims before their handlers run, so that Call.Metadata returns
	// it: one more statement (core.Store.ItemMetadata) per claim that
	// returned items, for all of them at once, in the claim loop. A
	// worker none of whose middleware asks sends no such statement.
	Metadata bool
}

// Call is one call of a handler, as middleware sees it.
type Call struct {
	// Queue and Kind are the items' (a call's items share both).
	Queue, Kind string
	// Items are the items as claimed (their attempt included). Do not
	// change them.
	Items []core.Item
	// Batch is set for a kind registered with HandleBatch.
	Batch bool
	h     *handler
	runs  []*run
}

// Metadata returns the metadata of id, one of the call's items, as the
// worker read it after the claim: empty when the item has none, when no
// middleware asked for metadata (Middleware.Metadata), or when the read
// failed (the worker logs it and runs the handlers all the same).
func (c *Call) Metadata(id uuid.UUID) core.Metadata {
	for _, r := range c.runs {
		if r.claim.ID == id {
			return r.metadata[id]
		}
	}
	return core.Metadata{}
}

// readMetadata reads the metadata of a claim's items for the
// middleware, in one statement; nil when none asked for it.
func (w *Worker) readMetadata(cs []core.Claim) map[uuid.UUID]core.Metadata {
	if w.itemMetadata == nil {
		return nil
	}
	ids := make([]uuid.UUID, len(cs))
	for i := range cs {
		ids[i] = cs[i].ID
	}
	md, err := w.itemMetadata(w.base, ids...)
	if err != nil {
		w.log.Warn("plenum/worker: read the claimed items' metadata for the middleware", "err", err)
	}
	return md
}

// chain returns fn wrapped by ms, the first outermost.
func chain(ms []Middleware, fn HandlerFunc) HandlerFunc {
	for i := len(ms) - 1; i >= 0; i-- {
		fn = ms[i].Wrap(fn)
	}
	return fn
}

// wantsMetadata says whether some middleware asks for metadata.
func wantsMetadata(ms []Middleware) bool {
	for _, m := range ms {
		if m.Metadata {
			return true
		}
	}
	return false
}

// newCall describes the call of h on runs.
func newCall(h *handler, runs []*run) *Call {
	c := &Call{Kind: h.kind, Items: make([]core.Item, len(runs)), Batch: h.batch != nil, h: h, runs: runs}
	for i, r := range runs {
		c.Items[i] = r.claim.Item
	}
	if len(runs) > 0 {
		c.Queue = runs[0].claim.Queue
	}
	return c
}

// handlerCall is the end of every chain: the handler itself.
func handlerCall(ctx context.Context, c *Call) error {
	if c.Batch {
		return c.h.batch.call(ctx, c.runs)
	}
	return c.h.call(ctx, c.runs[0])
}
