package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
)

// scheduleParams are the query parameters of the schedule actions: the
// schedule's name, which may hold a slash, so it is a parameter and not a
// path segment.
var scheduleParams = []string{"name"}

// scheduleFields are the fields of the schedule actions' forms, which the
// audit trail records.
var scheduleFields = map[string][]string{
	"set-schedule":      {"every", "cron", "zone", "queue", "kind", "priority", "max_catch_up"},
	"backfill-schedule": {"from", "to"},
}

// scheduleTarget is what a schedule action is about.
type scheduleTarget struct {
	Name string
	// Current is the schedule as stored, when Exists says there is one.
	Current core.Schedule
	Exists  bool
}

// Every is Current's interval as the form writes it ("" for none).
func (t scheduleTarget) Every() string {
	if t.Current.Every == 0 {
		return ""
	}
	return t.Current.Every.String()
}

// what names the schedule.
func (t scheduleTarget) what() string { return "schedule " + strconv.Quote(t.Name) }

// scheduleOf reads the schedule action's name from the query, and the
// schedule stored under it. Only set-schedule may name one that does not
// exist (it creates it).
func scheduleOf(describe func(scheduleTarget) (effect, warning string)) func(*handler, *http.Request) (target, error) {
	return func(h *handler, r *http.Request) (target, error) {
		name := r.URL.Query().Get("name")
		switch {
		case name == "":
			return target{}, badPath("name: required")
		case checkFilter(name, migrations.MaxScheduleLen) != "":
			return target{}, badPath("name: " + checkFilter(name, migrations.MaxScheduleLen))
		}
		st := scheduleTarget{Name: name}
		sc, err := h.store.GetSchedule(r.Context(), name)
		switch {
		case err == nil:
			st.Current, st.Exists = sc, true
		case !errors.Is(err, core.ErrNotFound):
			return target{}, err
		}
		t := target{Schedule: &st, Back: "/schedules"}
		t.Effect, t.Warning = describe(st)
		return t, nil
	}
}

// missing is the warning of an action on a schedule that is not stored.
func missing(t scheduleTarget) string {
	if t.Exists {
		return ""
	}
	return "No schedule of this name is stored: the store will refuse."
}

func describeSetSchedule(t scheduleTarget) (string, string) {
	if !t.Exists {
		return "A new schedule is stored, and ticks from its next tick in every worker running stored schedules.", ""
	}
	return "The schedule is changed as a whole (empty fields are empty, not kept), from the next look of every worker. A change of timing owes no tick from before the change.", ""
}

func describePauseSchedule(t scheduleTarget) (string, string) {
	w := missing(t)
	if t.Exists && t.Current.Paused {
		w = "The schedule is already paused."
	}
	return "No tick of the schedule is enqueued once the pause is stored, in any process. Items already enqueued run.", w
}

func describeResumeSchedule(t scheduleTarget) (string, string) {
	w := missing(t)
	if t.Exists && !t.Current.Paused {
		w = "The schedule is not paused."
	}
	return "The schedule ticks again from its next tick; the ticks that fell while it was paused are passed over (backfill them if they are wanted).", w
}

func describeTriggerSchedule(t scheduleTarget) (string, string) {
	return "The schedule's item is enqueued now, off its timing, even while it is paused. Its ticks are not moved.", missing(t)
}

func describeBackfillSchedule(t scheduleTarget) (string, string) {
	return "Each tick of the range up to the schedule's watermark whose item is not in the queue is enqueued, once however many backfills run. A tick whose item retention deleted is enqueued again.", missing(t)
}

func describeDeleteSchedule(t scheduleTarget) (string, string) {
	return "The schedule is deleted: no tick of it is enqueued once it is. Items already enqueued stay.", missing(t)
}

// doSetSchedule stores the form's schedule. A field that does not parse
// is the form's error; a schedule the store refuses is its
// *core.InputError, shown as it says.
func doSetSchedule(h *handler, r *http.Request, t target) (string, error) {
	field := func(f string) string { return strings.TrimSpace(r.PostFormValue(f)) }
	sp := core.ScheduleSpec{Name: t.Schedule.Name, Cron: field("cron"), TimeZone: field("zone"),
		Item: core.ItemSpec{Queue: field("queue"), Kind: field("kind")}}
	if s := field("every"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return "", formError("every: " + quote(s) + " is not a duration (e.g. 30s, 5m, 1h)")
		}
		sp.Every = d
	}
	if s := field("payload"); s != "" {
		sp.Item.Payload = json.RawMessage(s)
	}
	for f, p := range map[string]*int{"priority": &sp.Item.Priority, "max_catch_up": &sp.MaxCatchUp} {
		if s := field(f); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				return "", formError(f + ": " + quote(s) + " is not a whole number")
			}
			*p = n
		}
	}
	created, err := h.store.SetSchedule(r.Context(), sp)
	if err != nil {
		return "", err
	}
	if created {
		return fmt.Sprintf("Created: %s ticks %s.", t.Schedule.what(), timingText(sp)), nil
	}
	return fmt.Sprintf("Changed: %s ticks %s.", t.Schedule.what(), timingText(sp)), nil
}

func doPauseSchedule(h *handler, r *http.Request, t target) (string, error) {
	if err := h.store.PauseSchedule(r.Context(), t.Schedule.Name); err != nil {
		return "", err
	}
	return "Paused: " + t.Schedule.what() + ".", nil
}

func doResumeSchedule(h *handler, r *http.Request, t target) (string, error) {
	if err := h.store.ResumeSchedule(r.Context(), t.Schedule.Name); err != nil {
		return "", err
	}
	return "Resumed: " + t.Schedule.what() + " ticks from its next tick.", nil
}

func doTriggerSchedule(h *handler, r *http.Request, t target) (string, error) {
	tk, err := h.store.TriggerSchedule(r.Context(), t.Schedule.Name)
	if err != nil {
		return "", err
	}
	return "Triggered: " + t.Schedule.what() + " enqueued item " + tk.ID.String() + ".", nil
}

// doBackfillSchedule backfills the form's range (RFC 3339 times; an empty
// end is the watermark).
func doBackfillSchedule(h *handler, r *http.Request, t target) (string, error) {
	parse := func(f string) (time.Time, error) {
		s := strings.TrimSpace(r.PostFormValue(f))
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return v, formError(f + ": " + quote(s) + " is not an RFC 3339 time (e.g. 2026-03-08T00:00:00Z)")
		}
		return v, nil
	}
	from, err := parse("from")
	if err != nil {
		return "", err
	}
	to := from.Add(core.MaxDelay)
	if strings.TrimSpace(r.PostFormValue("to")) != "" {
		if to, err = parse("to"); err != nil {
			return "", err
		}
	}
	bf, err := h.store.BackfillSchedule(r.Context(), t.Schedule.Name, from, to)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Backfilled %s through %s: %d ticks enqueued, %d already in the queue.",
		t.Schedule.what(), bf.Through.Format(time.RFC3339), len(bf.Enqueued), bf.Existed), nil
}

func doDeleteSchedule(h *handler, r *http.Request, t target) (string, error) {
	if err := h.store.DeleteSchedule(r.Context(), t.Schedule.Name); err != nil {
		return "", err
	}
	if !t.Schedule.Exists {
		return "Nothing to delete: " + t.Schedule.what() + " was not stored.", nil
	}
	return "Deleted: " + t.Schedule.what() + ".", nil
}

// actionPath is an action's path with its target's parameters.
func actionPath(r *http.Request, params []string) string {
	v, w := r.URL.Query(), url.Values{}
	for _, p := range params {
		if s := v.Get(p); s != "" {
			w.Set(p, s)
		}
	}
	return r.URL.Path + "?" + w.Encode()
}
