package dashboard

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/migrations"
)

// limitParams are the query parameters of the limit actions: the queue
// and the key ("" for the queue's default) whose limit they change. A
// queue's name may hold any character, a slash included, so it is a
// parameter and not a path segment.
var limitParams = []string{"queue", "key"}

// limitFields are the set-limit form's fields, in the form's order.
var limitFields = []string{"concurrency", "per_process", "rate", "per", "burst", "weight"}

// limitTarget is what a limit action is about.
type limitTarget struct {
	Queue, Key string
	// Current is the limit set now (the key's own, or the queue's
	// default for Key ""), when Set says one is.
	Current core.Limit
	Set     bool
}

// Per is Current's period as the form writes it ("" for none).
func (t limitTarget) Per() string {
	if t.Current.Per == 0 {
		return ""
	}
	return t.Current.Per.String()
}

// what names the limit: "the default limit of queue q" or "the limit of
// key k of queue q".
func (t limitTarget) what() string {
	if t.Key == "" {
		return "the default limit of queue " + strconv.Quote(t.Queue)
	}
	return "the limit of key " + strconv.Quote(t.Key) + " of queue " + strconv.Quote(t.Queue)
}

// limitOf reads the limit action's queue and key from the query, and the
// limit set on them now.
func limitOf(describe func(limitTarget) (effect, warning string)) func(*handler, *http.Request) (target, error) {
	return func(h *handler, r *http.Request) (target, error) {
		v := r.URL.Query()
		queue, key := v.Get("queue"), v.Get("key")
		switch {
		case queue == "":
			return target{}, badPath("queue: required")
		case checkFilter(queue, migrations.MaxQueueLen) != "":
			return target{}, badPath("queue: " + checkFilter(queue, migrations.MaxQueueLen))
		case checkFilter(key, migrations.MaxFlowKeyLen) != "":
			return target{}, badPath("key: " + checkFilter(key, migrations.MaxFlowKeyLen))
		}
		lt := limitTarget{Queue: queue, Key: key}
		lanes, err := h.read.Lanes(r.Context(), browse.LanesParams{Queue: queue, Key: key, Limit: 1, CountCap: 1})
		if err != nil {
			return target{}, err
		}
		switch {
		case key == "":
			lt.Current, lt.Set = lanes.Default, lanes.DefaultSet
		case len(lanes.Lanes) == 1 && lanes.Lanes[0].Source == browse.LimitOwn:
			lt.Current, lt.Set = lanes.Lanes[0].Limit, true
		}
		t := target{Limit: &lt, Back: "/limits?" + url.Values{"queue": {queue}}.Encode()}
		t.Effect, t.Warning = describe(lt)
		return t, nil
	}
}

// describeSetLimit says what setting the limit does.
func describeSetLimit(t limitTarget) (string, string) {
	if t.Key == "" {
		return "The queue's default limit applies to every key of the queue that has no limit of its own, from the next claim of the queue in every process. Claims already held are kept: a lowered limit is reached as they end. Empty fields mean no limit.", ""
	}
	return "The key's own limit replaces the queue's default for this key as a whole, from the next claim of the queue in every process. Claims already held are kept: a lowered limit is reached as they end. Empty fields mean no limit.", ""
}

// describeDeleteLimit says what deleting the limit does.
func describeDeleteLimit(t limitTarget) (string, string) {
	w := ""
	if !t.Set {
		w = "No such limit is set: deleting it changes nothing."
	}
	if t.Key == "" {
		return "The queue's default limit is deleted: its keys without a limit of their own are no longer limited.", w
	}
	return "The key's own limit is deleted: the key follows the queue's default limit again, or none.", w
}

// doSetLimit stores the form's limit. A field that is not a number is the
// form's error; a number the store refuses (negative, too large, a rate
// without a period) is the store's *core.InputError, shown as it says.
func doSetLimit(h *handler, r *http.Request, t target) (string, error) {
	l := core.Limit{Queue: t.Limit.Queue, Key: t.Limit.Key}
	ints := map[string]*int{"concurrency": &l.Concurrency, "per_process": &l.PerProcess, "rate": &l.Rate, "burst": &l.Burst, "weight": &l.Weight}
	for _, f := range limitFields {
		s := strings.TrimSpace(r.PostFormValue(f))
		if s == "" {
			continue
		}
		if f == "per" {
			d, err := time.ParseDuration(s)
			if err != nil {
				return "", formError("per: " + quote(s) + " is not a duration (e.g. 1s, 1m, 1h)")
			}
			l.Per = d
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return "", formError(f + ": " + quote(s) + " is not a whole number")
		}
		*ints[f] = n
	}
	if err := h.store.SetLimit(r.Context(), l); err != nil {
		return "", err
	}
	return fmt.Sprintf("Set: %s is now %s.", t.Limit.what(), l.String()), nil
}

// doDeleteLimit deletes the target's limit.
func doDeleteLimit(h *handler, r *http.Request, t target) (string, error) {
	err := h.store.DeleteLimit(r.Context(), t.Limit.Queue, t.Limit.Key)
	if errors.Is(err, core.ErrNotFound) {
		err = nil
	}
	if err != nil {
		return "", err
	}
	if !t.Limit.Set {
		return "Nothing to delete: " + t.Limit.what() + " was not set.", nil
	}
	return "Deleted: " + t.Limit.what() + ".", nil
}
