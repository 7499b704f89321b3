package dashboard

import (
	"log/slog"
	"net/http"
	"strings"
)

// auditMax bounds the text of a value the trail copies from the request:
// a refused post's fields have not been checked.
const auditMax = 256

// Outcomes of an action in the audit trail.
const (
	outcomeDone       = "done"
	outcomeRefused    = "refused"
	outcomeForbidden  = "forbidden"
	outcomeBadRequest = "bad-request"
	outcomeNotFound   = "not-found"
	outcomeError      = "error"
	outcomeAborted    = "aborted"
)

// auditEntry is what the trail records of one action posted.
type auditEntry struct {
	outcome string
	status  int
	message string
	err     error
}

// audit logs one action posted: who (Options.Caller, the remote address),
// what (the action and its target, read from the path so that a refused
// post names what it aimed at), and how it went. Done and refused are
// routine (Info); a forbidden or malformed post may be an attack (Warn).
func (h *handler) audit(r *http.Request, a action, e auditEntry) {
	attrs := []slog.Attr{slog.String("action", a.name)}
	id := clipTo(r.PathValue("id"), auditMax)
	switch {
	case a.params != nil:
		v := r.URL.Query()
		for _, p := range a.params {
			attrs = append(attrs, slog.String(p, clipTo(v.Get(p), auditMax)))
		}
	case r.PathValue("item") != "":
		attrs = append(attrs, slog.String("run", id), slog.String("item", clipTo(r.PathValue("item"), auditMax)))
	case strings.HasPrefix(a.pattern, "/runs/"):
		attrs = append(attrs, slog.String("run", id))
	default:
		attrs = append(attrs, slog.String("item", id))
	}
	if a.name == "set-limit" && r.PostForm != nil {
		for _, f := range limitFields {
			attrs = append(attrs, slog.String(f, clipTo(r.PostForm.Get(f), auditMax)))
		}
	}
	if r.PostForm != nil {
		for _, f := range scheduleFields[a.name] {
			attrs = append(attrs, slog.String(f, clipTo(r.PostForm.Get(f), auditMax)))
		}
	}
	if a.name == "signal" && r.PostForm != nil {
		attrs = append(attrs,
			slog.String("signal", clipTo(r.PostForm.Get("name"), auditMax)),
			slog.String("key", clipTo(r.PostForm.Get("key"), auditMax)))
	}
	attrs = append(attrs,
		slog.String("outcome", e.outcome),
		slog.Int("status", e.status),
		slog.String("message", e.message),
	)
	if h.opts.Caller != nil {
		attrs = append(attrs, slog.String("caller", clipTo(h.opts.Caller(r), auditMax)))
	}
	attrs = append(attrs, slog.String("remote_addr", r.RemoteAddr))
	level := slog.LevelInfo
	switch e.outcome {
	case outcomeForbidden, outcomeBadRequest:
		level = slog.LevelWarn
	case outcomeError:
		level = slog.LevelError
	}
	if e.err != nil {
		attrs = append(attrs, slog.String("err", e.err.Error()))
	}
	h.log().LogAttrs(r.Context(), level, "dashboard action", attrs...)
}

// log is Options.Logger, or slog.Default() when none was given.
func (h *handler) log() *slog.Logger {
	if h.opts.Logger != nil {
		return h.opts.Logger
	}
	return slog.Default()
}
