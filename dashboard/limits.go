package dashboard

import (
	"net/http"
	"time"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/migrations"
)

// limitsPage is the data of a queue's flow control page.
type limitsPage struct {
	Lanes browse.Lanes
	Pager pager
}

// limits shows a queue's default limit and its lanes (the keys of its
// items that carry a flow key) in keyset pages by key: each lane's limit
// and where it comes from, its slots in use, its waiting items and its
// next turn.
func (h *handler) limits(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r.URL.RawQuery, "queue", "after", "limit")
	queue, limit := q.text("queue"), q.limit()
	after := q.v.Get("after")
	if problem := checkFilter(after, migrations.MaxFlowKeyLen); problem != "" {
		q.problems = append(q.problems, "after: "+problem)
	}
	if queue == "" && q.ok() {
		q.problems = append(q.problems, "queue: required")
	}
	if !q.ok() {
		h.badQuery(w, r, q)
		return
	}
	lanes, err := h.read.Lanes(r.Context(), browse.LanesParams{Queue: queue, After: after, Limit: limit})
	if err != nil {
		h.storeFailed(w, r, "lanes", err)
		return
	}
	p := limitsPage{Lanes: lanes}
	p.Pager = keysetText(baseOf(r), "/limits", q.v, "after", after, lanes.Next, false)
	h.render(w, r, http.StatusOK, "limits", "Limits of "+queue, lanes.Now, p)
}

// nextTurn says when a lane may next give work: "no work" for a lane
// without a turn or without a waiting item (a lane keeps its turn until a
// claim finds it empty), "now" for a turn that has come, else how long
// until it.
func nextTurn(now time.Time, l browse.Lane) string {
	switch {
	case l.NextAt.IsZero() || l.Waiting == 0:
		return "no work"
	case !l.NextAt.After(now):
		return "now"
	}
	return "in " + duration(l.NextAt.Sub(now))
}
