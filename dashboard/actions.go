package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// maxForm bounds an action's form: a signal's payload up to the store's
// default payload bound, and its name and key.
const maxForm = core.DefaultMaxPayloadBytes + 64<<10

// action is one change the dashboard can make. Its confirm page is a GET of
// pattern, the change a POST of the same path.
type action struct {
	// name is the button's data-action.
	name    string
	pattern string
	// verb is the button's and the confirm page's label.
	verb string
	// target reads what the action is about, and says what will happen.
	target func(h *handler, r *http.Request) (target, error)
	// do makes the change and says how it went.
	do func(h *handler, r *http.Request, t target) (string, error)
	// params are the query parameters that name the action's target,
	// when its path does not.
	params []string
}

// target is what an action is about, as its confirm page shows it.
type target struct {
	Item     *core.Item
	Run      *core.Run
	Limit    *limitTarget
	Schedule *scheduleTarget
	// Back is the page to go back to, under the base.
	Back string
	// Effect says what the action will do; Warning why it may be refused
	// as things stand.
	Effect, Warning string
}

// actions are every action, in the order their routes are registered.
var actions = []action{
	{name: "revive", pattern: "/items/{id}/revive", verb: "Revive item", target: itemTarget(func(it core.Item) (string, string) {
		w := ""
		if it.State != core.StateDead {
			w = "This item is " + string(it.State) + ", not dead: the store will refuse to revive it."
		}
		return "The dead item becomes available again now, with its attempts and crash count reset (its history is kept). If its barrier has not fired, the failure it counted there is taken back.", w
	}), do: doRevive},
	{name: "cancel", pattern: "/items/{id}/cancel", verb: "Cancel item", target: itemTarget(func(it core.Item) (string, string) {
		w := ""
		if it.State.Terminal() {
			w = "This item is already " + string(it.State) + "."
		}
		return "The item will not run again; a worker holding its claim loses it. It counts as a failed arrival at its barrier.", w
	}), do: doCancel},
	{name: "revive-run", pattern: "/runs/{id}/revive", verb: "Revive run", target: runTarget(func(run core.Run) (string, string) {
		w := ""
		if run.State.Final() {
			w = "This run is " + string(run.State) + ": the store will refuse to revive it."
		}
		return "Every dead item of the run is revived (fired barriers are re-armed so that their joins run again), and the run goes back to running. Nothing that completed runs again.", w
	}), do: doReviveRun},
	{name: "revive-step", pattern: "/runs/{id}/steps/{item}/revive", verb: "Revive step", target: stepTarget, do: doReviveStep},
	{name: "cancel-run", pattern: "/runs/{id}/cancel", verb: "Cancel run", target: runTarget(func(run core.Run) (string, string) {
		w := ""
		if run.State == core.RunCompleted {
			w = "This run is completed: the store will refuse to cancel it."
		}
		return "The run ends cancelled, then every unfinished item of it is cancelled: workers holding their claims lose them, and no join of the run runs.", w
	}), do: doCancelRun},
	{name: "signal", pattern: "/runs/{id}/signal", verb: "Send signal", target: runTarget(func(run core.Run) (string, string) {
		w := ""
		if run.State.Final() {
			w = "This run is " + string(run.State) + ": the store will refuse a signal to it."
		}
		return "The signal is stored once per name and key, and every step of the run waiting on that name becomes claimable at once.", w
	}), do: doSignal},
	{name: "set-limit", pattern: "/limits/set", verb: "Set limit", target: limitOf(describeSetLimit), do: doSetLimit, params: limitParams},
	{name: "delete-limit", pattern: "/limits/delete", verb: "Delete limit", target: limitOf(describeDeleteLimit), do: doDeleteLimit, params: limitParams},
	{name: "set-schedule", pattern: "/schedules/set", verb: "Set schedule", target: scheduleOf(describeSetSchedule), do: doSetSchedule, params: scheduleParams},
	{name: "pause-schedule", pattern: "/schedules/pause", verb: "Pause schedule", target: scheduleOf(describePauseSchedule), do: doPauseSchedule, params: scheduleParams},
	{name: "resume-schedule", pattern: "/schedules/resume", verb: "Resume schedule", target: scheduleOf(describeResumeSchedule), do: doResumeSchedule, params: scheduleParams},
	{name: "trigger-schedule", pattern: "/schedules/trigger", verb: "Trigger schedule", target: scheduleOf(describeTriggerSchedule), do: doTriggerSchedule, params: scheduleParams},
	{name: "backfill-schedule", pattern: "/schedules/backfill", verb: "Backfill schedule", target: scheduleOf(describeBackfillSchedule), do: doBackfillSchedule, params: scheduleParams},
	{name: "delete-schedule", pattern: "/schedules/delete", verb: "Delete schedule", target: scheduleOf(describeDeleteSchedule), do: doDeleteSchedule, params: scheduleParams},
}

// confirmPage is the data of an action's confirm page.
type confirmPage struct {
	Action string
	Verb   string
	Target target
	Token  string
	// Key prefills a signal's key, so that sending the form twice stores
	// the signal once.
	Key string
	// Name prefills a signal's name (from the waiting step's link).
	Name string
	// Path is the action's path under the base, where the form posts.
	Path string
}

// outcomePage is the data of an action's outcome page.
type outcomePage struct {
	Action  string
	Verb    string
	OK      bool
	Message string
	Back    string
}

// disabled refuses an action while Options.Actions is off.
func (h *handler) disabled(w http.ResponseWriter, r *http.Request) {
	h.fail(w, r, http.StatusForbidden, "Actions are disabled", "This dashboard is read-only: it was started without actions.")
}

// confirm serves an action's confirm page.
func (h *handler) confirm(a action) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !h.opts.Actions {
			h.disabled(w, r)
			return
		}
		allowed := append([]string{}, a.params...)
		if a.name == "signal" {
			allowed = append(allowed, "name")
		}
		q := newQuery(r.URL.RawQuery, allowed...)
		name := q.text("name")
		if !q.ok() {
			h.badQuery(w, r, q)
			return
		}
		t, err := a.target(h, r)
		if err != nil {
			h.targetFailed(w, r, err)
			return
		}
		p := confirmPage{Action: a.name, Verb: a.verb, Target: t, Token: h.issue(w, r), Name: name, Path: r.URL.Path}
		if a.params != nil {
			p.Path = actionPath(r, a.params)
		}
		if a.name == "signal" {
			p.Key = uuid.NewString()
		}
		h.render(w, r, http.StatusOK, "confirm", a.verb, time.Time{}, p)
	}
}

// act makes an action's change, after the CSRF checks, and records it in
// the audit trail whatever the outcome.
func (h *handler) act(a action) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		e := h.apply(w, r, a)
		h.audit(r, a, e)
	}
}

// apply is act's work: it writes the response and says how it went.
func (h *handler) apply(w http.ResponseWriter, r *http.Request, a action) auditEntry {
	refuse := func(status int, outcome, heading, text string, more ...string) auditEntry {
		h.fail(w, r, status, heading, text, more...)
		return auditEntry{outcome: outcome, status: status, message: strings.Join(append([]string{text}, more...), " ")}
	}
	if !h.opts.Actions {
		h.disabled(w, r)
		return auditEntry{outcome: outcomeForbidden, status: http.StatusForbidden, message: "actions are disabled"}
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		return refuse(http.StatusBadRequest, outcomeBadRequest, "Bad request", "The form could not be read.", err.Error())
	}
	if reason := h.checkCSRF(r); reason != "" {
		return refuse(http.StatusForbidden, outcomeForbidden, "Refused", "The action was refused: "+reason+".")
	}
	t, err := a.target(h, r)
	if err != nil {
		return h.targetFailed(w, r, err)
	}
	msg, err := a.do(h, r, t)
	e := auditEntry{outcome: outcomeDone, status: http.StatusOK}
	switch {
	case err == nil:
	case errors.As(err, new(refusal)):
		e.outcome, e.status, msg = outcomeRefused, http.StatusConflict, err.Error()
	case errors.Is(err, core.ErrNotFound):
		e.outcome, e.status, msg = outcomeNotFound, http.StatusNotFound, "Not found: "+err.Error()
	case errors.Is(err, core.ErrInvalidInput), errors.As(err, new(formError)):
		e.outcome, e.status, msg = outcomeBadRequest, http.StatusBadRequest, "Refused: "+err.Error()
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		return auditEntry{outcome: outcomeAborted, message: "the client went away; the action may or may not have been applied", err: err}
	default:
		e.outcome, e.status, e.err = outcomeError, http.StatusInternalServerError, err
		msg = "The database failed; the server's log has the details. The action may or may not have been applied: look at the page again."
	}
	e.message = msg
	h.render(w, r, e.status, "outcome", a.verb, time.Time{}, outcomePage{Action: a.name, Verb: a.verb, OK: err == nil, Message: msg, Back: t.Back})
	return e
}

// targetFailed renders the page for a target that could not be read, and
// says how that ends an action.
func (h *handler) targetFailed(w http.ResponseWriter, r *http.Request, err error) auditEntry {
	var bad badPath
	if errors.As(err, &bad) {
		h.fail(w, r, http.StatusBadRequest, "Bad request", "The page's parameters were refused:", string(bad))
		return auditEntry{outcome: outcomeBadRequest, status: http.StatusBadRequest, message: string(bad)}
	}
	h.storeFailed(w, r, "target", err)
	switch {
	case errors.Is(err, core.ErrNotFound):
		return auditEntry{outcome: outcomeNotFound, status: http.StatusNotFound, message: "no such target"}
	case errors.Is(err, core.ErrInvalidInput):
		return auditEntry{outcome: outcomeBadRequest, status: http.StatusBadRequest, message: err.Error()}
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		return auditEntry{outcome: outcomeAborted, message: "the client went away", err: err}
	}
	return auditEntry{outcome: outcomeError, status: http.StatusInternalServerError, message: "reading the target failed", err: err}
}

// badPath is a path segment that is not a UUID.
type badPath string

func (b badPath) Error() string { return string(b) }

// refusal is an outcome the store refused because of the target's state
// ("not dead", "already finished"): a 409 with the reason.
type refusal string

func (e refusal) Error() string { return string(e) }

// formError is a field of an action's form refused before the store.
type formError string

func (e formError) Error() string { return string(e) }

// idOf reads a path segment as a UUID.
func idOf(r *http.Request, name string) (uuid.UUID, error) {
	s := r.PathValue(name)
	id, err := parseID(s)
	if err != nil {
		return uuid.Nil, badPath(name + ": " + quote(s) + " is not a UUID")
	}
	return id, nil
}

// itemTarget reads the {id} item and describes the action with describe.
func itemTarget(describe func(core.Item) (effect, warning string)) func(*handler, *http.Request) (target, error) {
	return func(h *handler, r *http.Request) (target, error) {
		id, err := idOf(r, "id")
		if err != nil {
			return target{}, err
		}
		it, err := h.store.Get(r.Context(), id)
		if err != nil {
			return target{}, err
		}
		t := target{Item: &it, Back: "/items/" + id.String()}
		t.Effect, t.Warning = describe(it)
		return t, nil
	}
}

// runTarget reads the {id} run and describes the action with describe.
func runTarget(describe func(core.Run) (effect, warning string)) func(*handler, *http.Request) (target, error) {
	return func(h *handler, r *http.Request) (target, error) {
		id, err := idOf(r, "id")
		if err != nil {
			return target{}, err
		}
		run, err := h.store.GetRun(r.Context(), id)
		if err != nil {
			return target{}, err
		}
		t := target{Run: &run, Back: "/runs/" + id.String()}
		t.Effect, t.Warning = describe(run)
		return t, nil
	}
}

// stepTarget reads the {id} run and its {item} step.
func stepTarget(h *handler, r *http.Request) (target, error) {
	t, err := runTarget(func(core.Run) (string, string) { return "", "" })(h, r)
	if err != nil {
		return t, err
	}
	id, err := idOf(r, "item")
	if err != nil {
		return target{}, err
	}
	it, err := h.store.Get(r.Context(), id)
	if err != nil {
		return target{}, err
	}
	if it.Run != t.Run.ID {
		return target{}, fmt.Errorf("item %s is not a step of run %s: %w", id, t.Run.ID, core.ErrNotFound)
	}
	t.Item = &it
	t.Effect = "This dead step is revived (re-arming its barrier if that fired, so that its failed siblings run again too), and the run goes back to running; the run's other dead items stay dead."
	switch {
	case t.Run.State.Final():
		t.Warning = "This run is " + string(t.Run.State) + ": the store will refuse to revive it."
	case it.State != core.StateDead:
		t.Warning = "This step is " + string(it.State) + ", not dead: the store will refuse to revive it."
	}
	return t, nil
}
