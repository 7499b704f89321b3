package dashboard

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
)

// runStateNames are the run states as query values.
var runStateNames = []string{string(core.RunRunning), string(core.RunWaiting), string(core.RunHalted), string(core.RunCompleted), string(core.RunCancelled)}

// runsPage is the data of the runs list.
type runsPage struct {
	States []string
	Filter browse.RunFilter
	Runs   []core.Run
	Pager  pager
}

// runs lists pipeline runs newest first, filtered by name and state, in
// keyset pages.
func (h *handler) runs(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r.URL.RawQuery, "name", "state", "before", "limit")
	f := browse.RunFilter{
		Name:   q.text("name"),
		State:  core.RunState(q.oneOf("state", runStateNames)),
		Before: q.id("before"),
		Limit:  q.limit(),
	}
	if !q.ok() {
		h.badQuery(w, r, q)
		return
	}
	list, err := h.read.Runs(r.Context(), f)
	if err != nil {
		h.storeFailed(w, r, "runs", err)
		return
	}
	now, ok := h.now(w, r)
	if !ok {
		return
	}
	p := runsPage{States: runStateNames, Filter: f, Runs: list}
	next := uuid.Nil
	if len(list) == f.Limit {
		next = list[len(list)-1].ID
	}
	p.Pager = keyset(baseOf(r), "/runs", q.v, "before", f.Before, next, true)
	h.render(w, r, http.StatusOK, "runs", "Runs", now, p)
}
