package dashboard

import (
	"errors"
	"net/http"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// barrierPage is the data of a barrier's page.
type barrierPage struct {
	Barrier  core.Barrier
	Children []core.Item
	Pager    pager
}

// optionalBarrier reads the barrier id, or returns nil for uuid.Nil or a
// barrier purged since.
func (h *handler) optionalBarrier(r *http.Request, id uuid.UUID) (*core.Barrier, error) {
	if id == uuid.Nil {
		return nil, nil
	}
	b, err := h.store.GetBarrier(r.Context(), id)
	if errors.Is(err, core.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &b, nil
}

// barrier shows one barrier, its progress, and a keyset page of its
// children.
func (h *handler) barrier(w http.ResponseWriter, r *http.Request) {
	id, ok := h.pathID(w, r, "id")
	if !ok {
		return
	}
	q := newQuery(r.URL.RawQuery, "after", "limit")
	after, limit := q.id("after"), q.limit()
	if !q.ok() {
		h.badQuery(w, r, q)
		return
	}
	ctx := r.Context()
	b, err := h.store.GetBarrier(ctx, id)
	if err != nil {
		h.storeFailed(w, r, "barrier", err)
		return
	}
	kids, err := h.store.Children(ctx, core.ChildrenParams{Barrier: id, After: after, Limit: limit})
	if err != nil {
		h.storeFailed(w, r, "barrier's children", err)
		return
	}
	now, ok := h.now(w, r)
	if !ok {
		return
	}
	p := barrierPage{Barrier: b, Children: kids}
	next := uuid.Nil
	if len(kids) == limit {
		next = kids[len(kids)-1].ID
	}
	p.Pager = keyset(baseOf(r), "/barriers/"+id.String(), q.v, "after", after, next, false)
	h.render(w, r, http.StatusOK, "barrier", "Barrier "+b.Name, now, p)
}
