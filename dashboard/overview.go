package dashboard

import (
	"net/http"
	"time"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
)

// states lists item states in the order the pages show them.
var states = []core.State{core.StateAvailable, core.StateClaimed, core.StateCompleted, core.StateDead, core.StateCancelled}

// stateNames are the states as query values.
var stateNames = func() []string {
	out := make([]string, len(states))
	for i, s := range states {
		out[i] = string(s)
	}
	return out
}()

// overviewPage is the data of the queues page.
type overviewPage struct {
	States []core.State
	Queues []browse.QueueSummary
	Window time.Duration
	Pager  pager
}

// overview shows every queue: counts per state (capped), the oldest
// available item's age, recent throughput, and whether it is paused.
func (h *handler) overview(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r.URL.RawQuery, "queue", "after", "limit")
	queue, after, limit := q.text("queue"), q.text("after"), q.limit()
	if !q.ok() {
		h.badQuery(w, r, q)
		return
	}
	sums, err := h.read.QueueSummaries(r.Context(), browse.QueueSummaryParams{Queue: queue, After: after, Limit: limit})
	if err != nil {
		h.storeFailed(w, r, "queues", err)
		return
	}
	if queue != "" && len(sums) == 0 {
		h.fail(w, r, http.StatusNotFound, "Not found", "No queue is named "+quote(queue)+".")
		return
	}
	var now time.Time
	p := overviewPage{States: states, Queues: sums}
	if len(sums) > 0 {
		now, p.Window = sums[0].Now, sums[0].Window
	} else {
		var ok bool
		if now, ok = h.now(w, r); !ok {
			return
		}
	}
	next := ""
	if len(sums) == limit {
		next = sums[len(sums)-1].Queue
	}
	p.Pager = keysetText(baseOf(r), "/", q.v, "after", after, next, false)
	h.render(w, r, http.StatusOK, "overview", "Queues", now, p)
}
