package dashboard

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/browse"
)

// ownersPage is the data of the owners list.
type ownersPage struct {
	Owners []browse.OwnerInfo
	Pager  pager
}

// owners lists the registered owners with their heartbeat age on the
// database clock and the claims each holds, in keyset pages by id.
func (h *handler) owners(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r.URL.RawQuery, "after", "limit")
	after, limit := q.id("after"), q.limit()
	if !q.ok() {
		h.badQuery(w, r, q)
		return
	}
	list, err := h.read.Owners(r.Context(), browse.OwnersParams{After: after, Limit: limit})
	if err != nil {
		h.storeFailed(w, r, "owners", err)
		return
	}
	now, ok := h.now(w, r)
	if !ok {
		return
	}
	p := ownersPage{Owners: list}
	next := uuid.Nil
	if len(list) == limit {
		next = list[len(list)-1].ID
	}
	p.Pager = keyset(baseOf(r), "/owners", q.v, "after", after, next, false)
	h.render(w, r, http.StatusOK, "owners", "Owners", now, p)
}
