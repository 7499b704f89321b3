package dashboard

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// itemsPage is the data of the items list.
type itemsPage struct {
	States []string
	Filter core.ItemFilter
	Items  []core.Item
	Pager  pager
}

// items lists items newest first, filtered by queue, state, kind and run,
// in keyset pages.
func (h *handler) items(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r.URL.RawQuery, "queue", "state", "kind", "run", "before", "limit")
	f := core.ItemFilter{
		Queue:  q.text("queue"),
		State:  core.State(q.oneOf("state", stateNames)),
		Kind:   q.text("kind"),
		Run:    q.id("run"),
		Before: q.id("before"),
		Limit:  q.limit(),
	}
	if !q.ok() {
		h.badQuery(w, r, q)
		return
	}
	list, err := h.store.Items(r.Context(), f)
	if err != nil {
		h.storeFailed(w, r, "items", err)
		return
	}
	now, ok := h.now(w, r)
	if !ok {
		return
	}
	p := itemsPage{States: stateNames, Filter: f, Items: list}
	next := uuid.Nil
	if len(list) == f.Limit {
		next = list[len(list)-1].ID
	}
	p.Pager = keyset(baseOf(r), "/items", q.v, "before", f.Before, next, true)
	h.render(w, r, http.StatusOK, "items", "Items", now, p)
}
