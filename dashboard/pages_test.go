package dashboard_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dashboard"
)

// TestPages_ShowRealData loads every page on data made by the store's own
// calls, and finds on each what it is for.
func TestPages_ShowRealData(t *testing.T) {
	eachDatabase(t, func(t *testing.T, st *core.Store) {
		f := fill(t, st)
		c := serve(t, newDashboard(t, st, dashboard.Options{}), "")
		for _, tc := range []struct {
			path string
			want []string
		}{
			{"/", []string{`id="queues"`, `data-queue="emails"`, `data-queue="pipe"`, `data-queue="approve"`, `data-state="dead"`, "Oldest available", "Finished, last"}},
			{"/items", []string{`id="items"`, f.available.String(), f.dead.String(), "smtp: connection refused", "waiting approve"}},
			{"/items/" + f.dead.String(), []string{`id="item-facts"`, "smtp: connection refused", `id="attempts"`, `data-state="dead"`, `id="crash-count"`, "b@example.com"}},
			{"/items/" + f.completed.String(), []string{`id="result"`, "&#34;sent&#34;: true"}},
			{"/items/" + f.waiting.String(), []string{`id="waiting"`, "waiting for signal approve", `id="run-link"`}},
			{"/runs", []string{`id="runs"`, f.run.String(), f.halted.String(), "attempts_exhausted"}},
			{"/runs?state=halted", []string{f.halted.String()}},
			{"/runs/" + f.run.String(), []string{`id="tree"`, `class="node node-barrier"`, "files", `<progress class="progress" value="1" max="3">`, `id="waiting"`, `class="signal-name">approve<`}},
			{"/runs/" + f.halted.String(), []string{`id="halt"`, `id="halt-reason">attempts_exhausted<`, f.haltedDed.String()}},
			{"/barriers/" + f.barrier.String(), []string{`id="children"`, "1 arrived, 0 failed, of 3 expected", f.barrier.String()[:8]}},
			{"/owners", []string{`id="owners"`, f.owner.String(), "test-host", "4242", `class="num claims">1<`}},
			{"/stuck", []string{`id="stuck"`, f.barrier.String(), "sealed"}},
			{"/static/dashboard.css", []string{"state-dead"}},
		} {
			code, body := c.get(tc.path)
			wantStatus(t, "GET "+tc.path, code, http.StatusOK, body)
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("GET %s: no %q in the page:\n%s", tc.path, w, body)
				}
			}
			if strings.Contains(body, "data-action=") {
				t.Errorf("GET %s: an action button on a read-only dashboard", tc.path)
			}
		}
		// The halted run's page does not list the other run's steps, and
		// the stuck page's older filter leaves a young barrier out.
		if _, body := c.get("/runs/" + f.halted.String()); strings.Contains(body, f.parent.String()) {
			t.Errorf("the halted run's page shows another run's step")
		}
		if _, body := c.get("/stuck?older=1h"); strings.Contains(body, f.barrier.String()) {
			t.Errorf("/stuck?older=1h lists a barrier made just now")
		}
	})
}

// TestPages_EscapeEverything: a payload and a kind holding markup render
// as text.
func TestPages_EscapeEverything(t *testing.T) {
	eachDatabase(t, func(t *testing.T, st *core.Store) {
		f := fill(t, st)
		c := serve(t, newDashboard(t, st, dashboard.Options{}), "")
		for _, path := range []string{"/items/" + f.available.String(), "/items", "/items?kind=%3Cb%3Ebold%3C%2Fb%3E"} {
			code, body := c.get(path)
			wantStatus(t, path, code, http.StatusOK, body)
			for _, bad := range []string{"<script>alert(1)</script>", "<b>bold</b>"} {
				if strings.Contains(body, bad) {
					t.Errorf("GET %s: %q is in the page unescaped", path, bad)
				}
			}
			if !strings.Contains(body, "&lt;b&gt;bold&lt;/b&gt;") {
				t.Errorf("GET %s: the kind is not shown escaped:\n%s", path, body)
			}
		}
		_, body := c.get("/items/" + f.available.String())
		if !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
			t.Errorf("the payload is not shown escaped:\n%s", body)
		}
	})
}

// TestPages_SecurityHeaders: every response, pages, errors and the
// stylesheet, forbids framing and foreign content.
func TestPages_SecurityHeaders(t *testing.T) {
	t.Parallel()
	st := openStore(t, databases[0])
	srv := serve(t, newDashboard(t, st, dashboard.Options{}), "")
	for _, path := range []string{"/", "/items?state=nope", "/items/" + "00000000-0000-0000-0000-000000000000", "/static/dashboard.css", "/nope"} {
		resp, err := srv.http.Get(srv.base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		for h, want := range map[string]string{
			"Content-Security-Policy": "default-src 'self'",
			"X-Frame-Options":         "DENY",
			"X-Content-Type-Options":  "nosniff",
			"Referrer-Policy":         "same-origin",
		} {
			if got := resp.Header.Get(h); !strings.Contains(got, want) {
				t.Errorf("GET %s: %s = %q, want %q", path, h, got, want)
			}
		}
	}
}

// TestOwners_HeartbeatAgeOnTheDatabaseClock: a store whose clock runs two
// hours ahead (Options.ClockOffset, the database-side clock) shows an
// owner's heartbeat two hours old: the age is the database's, not this
// process's.
func TestOwners_HeartbeatAgeOnTheDatabaseClock(t *testing.T) {
	t.Parallel()
	st := openStore(t, databases[0])
	f := fill(t, st)
	ahead, err := core.Open(t.Context(), st.DB(), st.Dialect(), core.Options{Prefix: st.Prefix(), ClockOffset: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c := serve(t, newDashboard(t, ahead, dashboard.Options{}), "")
	code, body := c.get("/owners")
	wantStatus(t, "GET /owners", code, http.StatusOK, body)
	row := body[strings.Index(body, `<tr data-id="`+f.owner.String()):]
	row = row[:strings.Index(row, "</tr>")]
	if !strings.Contains(row, `class="age heartbeat"`) || !strings.Contains(row, ">2h<") && !strings.Contains(row, ">1h 59m<") {
		t.Errorf("owner row does not show a heartbeat two hours old:\n%s", row)
	}
}
