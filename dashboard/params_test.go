package dashboard_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dashboard"
)

// TestParams_BadInputIs400 sends each page a parameter it must refuse and
// expects a 400 page that names it.
func TestParams_BadInputIs400(t *testing.T) {
	t.Parallel()
	st := openStore(t, databases[0])
	c := serve(t, newDashboard(t, st, dashboard.Options{}), "")
	long := strings.Repeat("q", 129)
	for _, tc := range []struct{ path, names string }{
		{"/items?state=sleeping", "state"},
		{"/items?limit=0", "limit"},
		{"/items?limit=501", "limit"},
		{"/items?limit=ten", "limit"},
		{"/items?before=not-a-uuid", "before"},
		{"/items?run=1234", "run"},
		{"/items?queue=" + long, "queue"},
		{"/items?kind=%00x", "kind"},
		{"/items?queue=%ff", "queue"},
		{"/items?colour=red", "colour"},
		{"/items?queue=a&queue=b", "queue"},
		{"/items?queue=%zz", "malformed"},
		{"/runs?state=done", "state"},
		{"/runs?name=" + long, "name"},
		{"/owners?after=x", "after"},
		{"/stuck?older=yesterday", "older"},
		{"/stuck?older=-1m", "older"},
		{"/?queue=" + long, "queue"},
		{"/items/not-a-uuid", "id"},
		{"/runs/not-a-uuid", "id"},
		{"/barriers/" + strings.Repeat("0", 32), "id"},
		{"/items/" + uuid.NewString() + "?x=1", "x"},
	} {
		code, body := c.get(tc.path)
		wantStatus(t, "GET "+tc.path, code, http.StatusBadRequest, body)
		if !strings.Contains(body, `id="problems"`) || !strings.Contains(body, tc.names) {
			t.Errorf("GET %s: the 400 page does not name %q:\n%s", tc.path, tc.names, body)
		}
	}
}

// TestParams_UnknownIs404: unknown ids and paths.
func TestParams_UnknownIs404(t *testing.T) {
	eachDatabase(t, func(t *testing.T, st *core.Store) {
		c := serve(t, newDashboard(t, st, dashboard.Options{}), "")
		id := uuid.NewString()
		for _, path := range []string{"/items/" + id, "/runs/" + id, "/barriers/" + id, "/nope", "/items/" + id + "/more", "/?queue=no-such-queue"} {
			code, body := c.get(path)
			wantStatus(t, "GET "+path, code, http.StatusNotFound, body)
		}
	})
}
