package dashboard

import (
	"net/http"

	"github.com/plenumdb/plenum/core"
)

// stuckPage is the data of the stuck fan-ins page.
type stuckPage struct {
	Barriers []core.Barrier
	Older    string
	Limit    int
}

// stuck lists unfired barriers, oldest first, with their age.
func (h *handler) stuck(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r.URL.RawQuery, "older", "limit")
	older, limit := q.duration("older", core.MaxUnfiredAge), q.limit()
	if !q.ok() {
		h.badQuery(w, r, q)
		return
	}
	bs, err := h.store.UnfiredBarriers(r.Context(), core.UnfiredBarriersParams{OlderThan: older, Limit: limit})
	if err != nil {
		h.storeFailed(w, r, "unfired barriers", err)
		return
	}
	now, ok := h.now(w, r)
	if !ok {
		return
	}
	p := stuckPage{Barriers: bs, Limit: limit}
	if older > 0 {
		p.Older = older.String()
	}
	h.render(w, r, http.StatusOK, "stuck", "Stuck fan-ins", now, p)
}
