package dashboard

import (
	"net/http"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
)

// itemsPage is the data of the items list.
type itemsPage struct {
	States []string
	Filter browse.ItemFilter
	Items  []core.Item
	Pager  pager
	// Searched is set when a kind's search stopped at its bound before
	// filling the page: Examined rows were searched, and Pager's next
	// link goes on below them.
	Searched bool
	Examined int
}

// items lists items newest first, filtered by queue, state, kind, run,
// tag and metadata key (and value),
// in keyset pages. A kind is searched for among a bounded number of the
// newest rows per page: a page short because of that bound says so.
func (h *handler) items(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r.URL.RawQuery, "queue", "state", "kind", "run", "tag", "meta_key", "meta_value", "before", "limit")
	f := browse.ItemFilter{
		Queue: q.text("queue"),
		State: core.State(q.oneOf("state", stateNames)),
		Kind:  q.text("kind"),
		Run:   q.id("run"),
		Tag:   q.text("tag"),

		MetaKey:   q.text("meta_key"),
		MetaValue: q.text("meta_value"),
		Before:    q.id("before"),
		Limit:     q.limit(),

		SearchRows: h.opts.SearchRows,
	}
	if !q.ok() {
		h.badQuery(w, r, q)
		return
	}
	page, err := h.read.Items(r.Context(), f)
	if err != nil {
		h.storeFailed(w, r, "items", err)
		return
	}
	now, ok := h.now(w, r)
	if !ok {
		return
	}
	p := itemsPage{States: stateNames, Filter: f, Items: page.Items, Searched: page.Searched, Examined: page.Examined}
	p.Pager = keyset(baseOf(r), "/items", q.v, "before", f.Before, page.Next, true)
	if page.Searched {
		p.Pager.NextLabel = "search older →"
	}
	h.render(w, r, http.StatusOK, "items", "Items", now, p)
}
