package dashboard_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dashboard"
)

// allow is an Authorize hook that lets everyone in.
func allow(*http.Request) error { return nil }

// withActions is a dashboard with actions on, behind a hook.
func withActions(t *testing.T, st *core.Store) *client {
	return serve(t, newDashboard(t, st, dashboard.Options{Actions: true, Authorize: allow}), "")
}

func state(t *testing.T, st *core.Store, id uuid.UUID) core.State {
	t.Helper()
	it, err := st.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return it.State
}

// TestActions_OffByDefault: a read-only dashboard shows no button, and
// refuses the confirm pages and the POSTs with 403, changing nothing.
func TestActions_OffByDefault(t *testing.T) {
	eachDatabase(t, func(t *testing.T, st *core.Store) {
		f := fill(t, st)
		c := serve(t, newDashboard(t, st, dashboard.Options{}), "")
		for _, path := range []string{"/items/" + f.dead.String(), "/runs/" + f.halted.String(), "/runs/" + f.run.String()} {
			if _, body := c.get(path); strings.Contains(body, "data-action") {
				t.Errorf("GET %s: an action button with actions off", path)
			}
		}
		for _, path := range []string{
			"/items/" + f.dead.String() + "/revive",
			"/items/" + f.available.String() + "/cancel",
			"/runs/" + f.halted.String() + "/revive",
			"/runs/" + f.halted.String() + "/steps/" + f.haltedDed.String() + "/revive",
			"/runs/" + f.run.String() + "/cancel",
			"/runs/" + f.run.String() + "/signal",
		} {
			code, body := c.get(path)
			wantStatus(t, "GET "+path, code, http.StatusForbidden, body)
			code, body = c.post(path, url.Values{"csrf": {"x"}, "name": {"approve"}, "key": {"k"}}, nil)
			wantStatus(t, "POST "+path, code, http.StatusForbidden, body)
		}
		if got := state(t, st, f.dead); got != core.StateDead {
			t.Errorf("dead item is %s after refused POSTs", got)
		}
		if got := state(t, st, f.available); got != core.StateAvailable {
			t.Errorf("available item is %s after refused POSTs", got)
		}
		run, _ := st.GetRun(context.Background(), f.halted)
		if run.State != core.RunHalted {
			t.Errorf("halted run is %s after refused POSTs", run.State)
		}
	})
}

// TestActions_CSRFRefused: a POST without the cookie, without or with a
// wrong token, from another origin, or with no origin at all, is refused
// and changes nothing; the same POST done right revives.
func TestActions_CSRFRefused(t *testing.T) {
	eachDatabase(t, func(t *testing.T, st *core.Store) {
		f := fill(t, st)
		c := withActions(t, st)
		path := "/items/" + f.dead.String() + "/revive"
		token, page := c.confirm(path)
		if !strings.Contains(page, `id="effect"`) || !strings.Contains(page, `data-action="confirm"`) {
			t.Fatalf("confirm page lacks its effect or button:\n%s", page)
		}
		// The cookie is SameSite=Strict and HttpOnly.
		u, _ := url.Parse(c.base)
		resp, _ := c.http.Get(c.base + path)
		resp.Body.Close()
		_ = resp
		fresh := serve(t, newDashboard(t, st, dashboard.Options{Actions: true, Authorize: allow}), "")
		r2, err := fresh.http.Get(fresh.base + path)
		if err != nil {
			t.Fatal(err)
		}
		r2.Body.Close()
		sc := r2.Header.Get("Set-Cookie")
		if !strings.Contains(sc, "SameSite=Strict") || !strings.Contains(sc, "HttpOnly") {
			t.Errorf("csrf cookie: %q, want SameSite=Strict and HttpOnly", sc)
		}

		for _, tc := range []struct {
			name string
			form url.Values
			edit func(*http.Request)
		}{
			{"no token", url.Values{}, nil},
			{"wrong token", url.Values{"csrf": {token[:len(token)-2] + "xx"}}, nil},
			{"token of another handler", url.Values{"csrf": {tokenRE.FindStringSubmatch(mustConfirm(t, fresh, path))[1]}}, nil},
			{"no cookie", url.Values{"csrf": {token}}, func(r *http.Request) { r.Header.Set("Cookie", "") }},
			{"cross origin", url.Values{"csrf": {token}}, func(r *http.Request) { r.Header.Set("Origin", "https://evil.example") }},
			{"cross-site fetch", url.Values{"csrf": {token}}, func(r *http.Request) { r.Header.Set("Sec-Fetch-Site", "cross-site") }},
			{"foreign referer", url.Values{"csrf": {token}}, func(r *http.Request) {
				r.Header.Del("Origin")
				r.Header.Set("Referer", "https://evil.example/page")
			}},
			{"no origin nor referer", url.Values{"csrf": {token}}, func(r *http.Request) { r.Header.Del("Origin") }},
		} {
			var code int
			var body string
			if tc.name == "no cookie" {
				// A client without the jar's cookie.
				req, _ := http.NewRequest(http.MethodPost, c.base+path, strings.NewReader(tc.form.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("Origin", u.Scheme+"://"+u.Host)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				code, body = readBody(t, resp)
			} else {
				code, body = c.post(path, tc.form, tc.edit)
			}
			wantStatus(t, tc.name, code, http.StatusForbidden, body)
			if got := state(t, st, f.dead); got != core.StateDead {
				t.Fatalf("%s: the item is %s: a refused POST changed it", tc.name, got)
			}
		}
		// Referer alone, same origin: accepted.
		code, body := c.post(path, url.Values{"csrf": {token}}, func(r *http.Request) {
			r.Header.Del("Origin")
			r.Header.Set("Referer", c.base+path)
		})
		wantStatus(t, "same-origin referer", code, http.StatusOK, body)
		if got := state(t, st, f.dead); got != core.StateAvailable {
			t.Errorf("after revive the item is %s", got)
		}
	})
}

func mustConfirm(t *testing.T, c *client, path string) string {
	t.Helper()
	_, page := c.confirm(path)
	return page
}

// TestActions_ChangeTheDatabase: each action, confirmed and posted, changes
// the database through the store, and a second try reports why nothing
// more happened.
func TestActions_ChangeTheDatabase(t *testing.T) {
	eachDatabase(t, func(t *testing.T, st *core.Store) {
		ctx := context.Background()
		f := fill(t, st)
		c := withActions(t, st)
		outcome := func(what string, code int, body string, wantCode int, wantText string) {
			t.Helper()
			wantStatus(t, what, code, wantCode, body)
			if !strings.Contains(body, `id="outcome"`) || !strings.Contains(body, wantText) {
				t.Errorf("%s: outcome does not say %q:\n%s", what, wantText, body)
			}
		}

		// Buttons show where the action applies.
		_, body := c.get("/items/" + f.dead.String())
		if !strings.Contains(body, `data-action="revive"`) {
			t.Errorf("no revive button on a dead item")
		}
		_, body = c.get("/runs/" + f.halted.String())
		for _, a := range []string{"revive-run", "cancel-run", "signal", "revive-step"} {
			if !strings.Contains(body, `data-action="`+a+`"`) {
				t.Errorf("no %s button on a halted run", a)
			}
		}

		code, body := c.act("/items/"+f.dead.String()+"/revive", nil)
		outcome("revive", code, body, http.StatusOK, "Revived")
		if got := state(t, st, f.dead); got != core.StateAvailable {
			t.Errorf("revived item is %s", got)
		}
		code, body = c.act("/items/"+f.dead.String()+"/revive", nil)
		outcome("revive again", code, body, http.StatusConflict, "not dead")

		code, body = c.act("/items/"+f.available.String()+"/cancel", nil)
		outcome("cancel", code, body, http.StatusOK, "Cancelled")
		if got := state(t, st, f.available); got != core.StateCancelled {
			t.Errorf("cancelled item is %s", got)
		}
		code, body = c.act("/items/"+f.available.String()+"/cancel", nil)
		outcome("cancel again", code, body, http.StatusOK, "Already cancelled")
		code, body = c.act("/items/"+f.completed.String()+"/cancel", nil)
		outcome("cancel completed", code, body, http.StatusConflict, "already completed")

		// The waiting step takes the signal: it is no longer waiting.
		code, body = c.act("/runs/"+f.run.String()+"/signal", url.Values{"name": {"approve"}, "key": {"k-1"}, "payload": {`{"by":"ann"}`}})
		outcome("signal", code, body, http.StatusOK, "1 waiting steps woken")
		owner, _ := st.RegisterOwner(ctx, core.RegisterOwnerParams{})
		if cs, err := st.Claim(ctx, core.ClaimParams{Queue: "approve", Owner: owner, Limit: 1, Lease: time.Minute}); err != nil || len(cs) != 1 || cs[0].ID != f.waiting {
			t.Errorf("the signalled step is not claimable: %v, %v", cs, err)
		} else if err := st.Release(ctx, cs[0], 0); err != nil {
			t.Fatal(err)
		}
		code, body = c.act("/runs/"+f.run.String()+"/signal", url.Values{"name": {"approve"}, "key": {"k-1"}})
		outcome("signal again", code, body, http.StatusOK, "Already sent")
		code, body = c.act("/runs/"+f.run.String()+"/signal", url.Values{"name": {"approve"}, "key": {"k-2"}, "payload": {"{not json"}})
		outcome("signal bad payload", code, body, http.StatusBadRequest, "payload")

		// One step of the halted run, then the run again (nothing dead).
		code, body = c.act("/runs/"+f.halted.String()+"/steps/"+f.haltedDed.String()+"/revive", nil)
		outcome("revive step", code, body, http.StatusOK, "Revived")
		if run, _ := st.GetRun(ctx, f.halted); run.State != core.RunRunning {
			t.Errorf("run after revive step is %s", run.State)
		}
		if got := state(t, st, f.haltedDed); got != core.StateAvailable {
			t.Errorf("revived step is %s", got)
		}
		code, body = c.get("/runs/" + f.halted.String() + "/steps/" + f.dead.String() + "/revive")
		wantStatus(t, "revive a step of another run", code, http.StatusNotFound, body)

		code, body = c.act("/runs/"+f.run.String()+"/cancel", nil)
		outcome("cancel run", code, body, http.StatusOK, "Cancelled")
		if run, _ := st.GetRun(ctx, f.run); run.State != core.RunCancelled {
			t.Errorf("cancelled run is %s", run.State)
		}
		if got := state(t, st, f.waiting); got != core.StateCancelled {
			t.Errorf("a step of the cancelled run is %s", got)
		}
		code, body = c.act("/runs/"+f.run.String()+"/revive", nil)
		outcome("revive cancelled run", code, body, http.StatusConflict, "already finished")
		code, body = c.post("/items/"+uuid.NewString()+"/revive", url.Values{"csrf": {"x"}}, nil)
		wantStatus(t, "revive with a bad token", code, http.StatusForbidden, body)
	})
}

// TestActions_ReviveHaltedRun revives a whole halted run.
func TestActions_ReviveHaltedRun(t *testing.T) {
	eachDatabase(t, func(t *testing.T, st *core.Store) {
		f := fill(t, st)
		c := withActions(t, st)
		code, body := c.act("/runs/"+f.halted.String()+"/revive", nil)
		wantStatus(t, "revive run", code, http.StatusOK, body)
		if !strings.Contains(body, "1 dead items revived") {
			t.Errorf("outcome: %s", body)
		}
		if run, _ := st.GetRun(context.Background(), f.halted); run.State != core.RunRunning {
			t.Errorf("revived run is %s", run.State)
		}
	})
}

// TestNew_RefusesUnsafeOptions: actions need a hook or the loopback
// promise; a bad prefix or a short secret is refused.
func TestNew_RefusesUnsafeOptions(t *testing.T) {
	t.Parallel()
	st := openStore(t, databases[0])
	for _, o := range []dashboard.Options{
		{Actions: true},
		{Prefix: "admin"},
		{Prefix: "/admin/"},
		{Prefix: "/a b"},
		{Secret: []byte("short")},
	} {
		if _, err := dashboard.New(st, o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
	if _, err := dashboard.New(nil, dashboard.Options{}); err == nil {
		t.Errorf("New(nil store) accepted")
	}
	if _, err := dashboard.New(st, dashboard.Options{Actions: true, AllowUnauthenticatedActions: true}); err != nil {
		t.Errorf("loopback actions refused: %v", err)
	}
}

// TestAuthorize_RunsOnEveryRequest: a refusing hook closes every page, the
// stylesheet and the actions.
func TestAuthorize_RunsOnEveryRequest(t *testing.T) {
	t.Parallel()
	st := openStore(t, databases[0])
	calls := 0
	h := newDashboard(t, st, dashboard.Options{Actions: true, Authorize: func(r *http.Request) error {
		calls++
		if r.Header.Get("X-User") == "admin" {
			return nil
		}
		return errors.New("who are you")
	}})
	c := serve(t, h, "")
	paths := []string{"/", "/items", "/runs", "/owners", "/stuck", "/static/dashboard.css", "/items/" + uuid.NewString() + "/revive"}
	for _, p := range paths {
		code, body := c.get(p)
		wantStatus(t, "GET "+p, code, http.StatusForbidden, body)
		if strings.Contains(body, "who are you") {
			t.Errorf("GET %s: the hook's error is shown", p)
		}
	}
	code, body := c.post("/items/"+uuid.NewString()+"/revive", url.Values{}, nil)
	wantStatus(t, "POST", code, http.StatusForbidden, body)
	if calls != len(paths)+1 {
		t.Errorf("Authorize ran %d times for %d requests", calls, len(paths)+1)
	}
	req, _ := http.NewRequest(http.MethodGet, c.base+"/", nil)
	req.Header.Set("X-User", "admin")
	resp, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if code, body := readBody(t, resp); code != http.StatusOK {
		t.Errorf("authorized GET /: %d\n%s", code, body)
	}
}
