package dashboard

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// storeFailed renders the page for an error of a store read: 404 for
// ErrNotFound, 400 for refused input, nothing for a request the client
// gave up on, and 500 otherwise (logged; the page does not show the
// database's words).
func (h *handler) storeFailed(w http.ResponseWriter, r *http.Request, what string, err error) {
	switch {
	case errors.Is(err, core.ErrNotFound):
		h.fail(w, r, http.StatusNotFound, "Not found", "No "+what+" has that id.")
	case errors.Is(err, core.ErrInvalidInput):
		h.fail(w, r, http.StatusBadRequest, "Bad request", "The store refused the request.", err.Error())
	case errors.Is(err, context.Canceled) && r.Context().Err() != nil:
		// The client went away: nobody reads the page.
	default:
		h.log().Error("dashboard: store read", "what", what, "err", err)
		h.fail(w, r, http.StatusInternalServerError, "Database error", "Reading the "+what+" failed; the server's log has the details.")
	}
}

// badQuery renders the 400 page for q's problems.
func (h *handler) badQuery(w http.ResponseWriter, r *http.Request, q *query) {
	h.fail(w, r, http.StatusBadRequest, "Bad request", "The page's parameters were refused:", q.problems...)
}

// pathID reads the {name} path segment as a UUID, or renders a 400.
func (h *handler) pathID(w http.ResponseWriter, r *http.Request, name string) (uuid.UUID, bool) {
	s := r.PathValue(name)
	id, err := parseID(s)
	if err != nil {
		h.fail(w, r, http.StatusBadRequest, "Bad request", "The page's parameters were refused:", name+": "+quote(s)+" is not a UUID")
		return uuid.Nil, false
	}
	return id, true
}

// quote quotes text shown back in an error, clipped.
func quote(s string) string { return "\"" + clip(s) + "\"" }

// now reads the database clock, rendering the error page if it fails.
func (h *handler) now(w http.ResponseWriter, r *http.Request) (time.Time, bool) {
	t, err := h.store.Now(r.Context())
	if err != nil {
		h.storeFailed(w, r, "database clock", err)
		return time.Time{}, false
	}
	return t, true
}
