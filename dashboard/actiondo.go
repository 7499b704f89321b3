package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/plenumdb/plenum/core"
)

// doRevive revives a dead item.
func doRevive(h *handler, r *http.Request, t target) (string, error) {
	err := h.store.Revive(r.Context(), t.Item.ID)
	if errors.Is(err, core.ErrNotDead) {
		if t.Item.State == core.StateAvailable {
			return "", refusal("Not revived: the item is available, not dead (already revived?).")
		}
		return "", refusal("Not revived: the item is " + string(t.Item.State) + ", not dead.")
	}
	if err != nil {
		return "", err
	}
	return "Revived: the item is available again.", nil
}

// doCancel cancels an item.
func doCancel(h *handler, r *http.Request, t target) (string, error) {
	err := h.store.Cancel(r.Context(), t.Item.ID)
	if errors.Is(err, core.ErrFinished) {
		return "", refusal("Not cancelled: the item is already " + finishedState(h, r, t) + ".")
	}
	if err != nil {
		return "", err
	}
	if t.Item.State == core.StateCancelled {
		return "Already cancelled: nothing changed.", nil
	}
	return "Cancelled: the item will not run again.", nil
}

// finishedState re-reads the state a finished item ended in.
func finishedState(h *handler, r *http.Request, t target) string {
	if it, err := h.store.Get(r.Context(), t.Item.ID); err == nil {
		return string(it.State)
	}
	return "finished"
}

// doReviveRun revives a halted run.
func doReviveRun(h *handler, r *http.Request, t target) (string, error) {
	res, err := h.store.ReviveRun(r.Context(), t.Run.ID)
	if errors.Is(err, core.ErrRunFinished) {
		return "", refusal("Not revived: the run is already finished.")
	}
	if err != nil {
		return "", err
	}
	if res.Items == 0 && t.Run.State != core.RunHalted {
		return fmt.Sprintf("Nothing to revive: the run is %s and has no dead item.", t.Run.State), nil
	}
	return fmt.Sprintf("Revived: %d dead items revived, %d barriers re-armed; the run is running.", res.Items, res.Barriers), nil
}

// doReviveStep revives one dead step of a run.
func doReviveStep(h *handler, r *http.Request, t target) (string, error) {
	res, err := h.store.ReviveRunItem(r.Context(), t.Run.ID, t.Item.ID)
	switch {
	case errors.Is(err, core.ErrRunFinished):
		return "", refusal("Not revived: the run is already finished.")
	case errors.Is(err, core.ErrNotDead):
		return "", refusal("Not revived: the step is " + string(t.Item.State) + ", not dead (already revived?).")
	case err != nil:
		return "", err
	}
	return fmt.Sprintf("Revived: %d items revived, %d barriers re-armed; the run is running.", res.Items, res.Barriers), nil
}

// doCancelRun cancels a run and its unfinished items.
func doCancelRun(h *handler, r *http.Request, t target) (string, error) {
	res, err := h.store.CancelRun(r.Context(), t.Run.ID)
	if errors.Is(err, core.ErrRunFinished) {
		return "", refusal("Not cancelled: the run is already completed.")
	}
	if err != nil {
		return "", err
	}
	if t.Run.State == core.RunCancelled && res.Items == 0 {
		return "Already cancelled: nothing changed.", nil
	}
	return fmt.Sprintf("Cancelled: the run is cancelled, and %d unfinished items with it.", res.Items), nil
}

// doSignal sends the form's signal to a run.
func doSignal(h *handler, r *http.Request, t target) (string, error) {
	name := strings.TrimSpace(r.PostFormValue("name"))
	key := strings.TrimSpace(r.PostFormValue("key"))
	payload := strings.TrimSpace(r.PostFormValue("payload"))
	switch {
	case name == "":
		return "", formError("the signal needs a name")
	case checkText(name, 128) != "":
		return "", formError("name: " + checkText(name, 128))
	case key == "":
		return "", formError("the signal needs a key")
	case checkText(key, 200) != "":
		return "", formError("key: " + checkText(key, 200))
	case payload != "" && !json.Valid([]byte(payload)):
		return "", formError("payload: not a JSON document")
	}
	spec := core.SignalSpec{Run: t.Run.ID, Name: name, Key: key}
	if payload != "" {
		spec.Payload = json.RawMessage(payload)
	}
	res, err := h.store.Signal(r.Context(), spec)
	if errors.Is(err, core.ErrRunFinished) {
		return "", refusal("Not sent: the run is already finished.")
	}
	if err != nil {
		return "", err
	}
	if res.Existed {
		return fmt.Sprintf("Already sent: a signal %q with key %q was stored before; nothing changed.", name, key), nil
	}
	return fmt.Sprintf("Sent: signal %q stored; %d waiting steps woken.", name, res.Woken), nil
}
