package dashboard

import (
	"net/http"
	"time"

	"github.com/plenumdb/plenum/core"
)

// schedulesPage is the data of the schedules page.
type schedulesPage struct {
	Schedules []core.Schedule
}

// schedules shows the schedules kept in the database: each one's timing,
// zone, item, state, watermark and next tick, with their actions.
func (h *handler) schedules(w http.ResponseWriter, r *http.Request) {
	q := newQuery(r.URL.RawQuery)
	if !q.ok() {
		h.badQuery(w, r, q)
		return
	}
	all, err := h.store.Schedules(r.Context())
	if err != nil {
		h.storeFailed(w, r, "schedules", err)
		return
	}
	h.render(w, r, http.StatusOK, "schedules", "Schedules", time.Time{}, schedulesPage{Schedules: all})
}

// timingText says when a schedule ticks: "every 5m0s", or "30 2 * * *
// (Europe/Paris)".
func timingText(sp core.ScheduleSpec) string {
	if sp.Cron == "" {
		return "every " + sp.Every.String()
	}
	zone := sp.TimeZone
	if zone == "" {
		zone = "UTC"
	}
	return sp.Cron + " (" + zone + ")"
}
