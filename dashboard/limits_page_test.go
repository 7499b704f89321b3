package dashboard_test

import (
	"context"
	"html"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dashboard"
)

// fillLanes gives queue "flow/q" (a name with a slash, which only a query
// parameter carries) a default limit of 2, key "b" a limit of its own,
// and three keys of items, two of "a" claimed.
func fillLanes(t *testing.T, st *core.Store) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	const q = "flow/q"
	must(st.SetLimit(ctx, core.Limit{Queue: q, Concurrency: 2}))
	must(st.SetLimit(ctx, core.Limit{Queue: q, Key: "b", Concurrency: 1, Rate: 5, Per: time.Minute, Weight: 3}))
	var specs []core.ItemSpec
	for _, k := range []string{"a", "a", "a", "b", "c"} {
		specs = append(specs, core.ItemSpec{Queue: q, FlowKey: k})
	}
	_, err := st.Enqueue(ctx, specs...)
	must(err)
	owner, err := st.RegisterOwner(ctx, core.RegisterOwnerParams{Host: "test-host", PID: 1})
	must(err)
	for range 5 {
		cs, err := st.Claim(ctx, core.ClaimParams{Queue: q, Owner: owner, Limit: 10, Lease: time.Hour})
		must(err)
		if len(cs) == 0 {
			break
		}
	}
}

// row returns the lanes table's row of key.
func row(t *testing.T, body, key string) string {
	t.Helper()
	i := strings.Index(body, `<tr data-key="`+key+`">`)
	if i < 0 {
		t.Fatalf("no row for key %q:\n%s", key, body)
	}
	rest := body[i:]
	return rest[:strings.Index(rest, "</tr>")]
}

// TestLimits_PageShowsLanes: the queues page links to a queue's limits;
// that page shows its default limit and each lane's key, limit and
// where it comes from, slots in use, waiting items and next turn, with no
// action offered on a read-only dashboard.
func TestLimits_PageShowsLanes(t *testing.T) {
	eachDatabase(t, func(t *testing.T, st *core.Store) {
		fillLanes(t, st)
		c := serve(t, newDashboard(t, st, dashboard.Options{}), "")
		_, overview := c.get("/")
		if !strings.Contains(overview, `href="/limits?queue=flow%2fq"`) {
			t.Fatalf("the queues page does not link to the queue's limits:\n%s", overview)
		}
		code, body := c.get("/limits?queue=flow%2Fq")
		wantStatus(t, "GET /limits", code, http.StatusOK, body)
		if !strings.Contains(body, `<span id="default" data-set="true">concurrency 2</span>`) {
			t.Errorf("default limit not shown:\n%s", body)
		}
		for _, c := range []struct{ key, limit, source, claimed, waiting, next string }{
			{"a", "concurrency 2", "default", "2 / 2", "1", "now"},
			{"b", "concurrency 1, rate 5/1m0s, weight 3", "own", "1 / 1", "0", "no work"},
			{"c", "concurrency 2", "default", "1 / 2", "0", "no work"},
		} {
			r := html.UnescapeString(row(t, body, c.key))
			for _, want := range []string{
				`<td class="limit">` + c.limit + `</td>`,
				`data-source="` + c.source + `"`,
				`<td class="num claimed">` + c.claimed + `</td>`,
				`<td class="num waiting">` + c.waiting + `</td>`,
				`>` + c.next + `</td>`,
			} {
				if !strings.Contains(r, want) {
					t.Errorf("key %s: row lacks %s:\n%s", c.key, want, r)
				}
			}
		}
		if strings.Contains(body, "data-action") || strings.Contains(body, `id="key-limit"`) {
			t.Errorf("a read-only dashboard offers limit actions:\n%s", body)
		}
		code, body = c.get("/limits")
		wantStatus(t, "GET /limits without a queue", code, http.StatusBadRequest, body)
		code, body = c.get("/limits?queue=q&limit=0")
		wantStatus(t, "GET /limits limit=0", code, http.StatusBadRequest, body)
	})
}

// TestLimits_SetAndDelete: with actions on, the limits page offers them;
// setting and deleting a key's limit or the queue's default go through
// the confirm page and its CSRF token, show the outcome, and are logged;
// input the store refuses is a 400 with its reason and changes nothing;
// on a read-only dashboard both are refused.
func TestLimits_SetAndDelete(t *testing.T) {
	eachDatabase(t, func(t *testing.T, st *core.Store) {
		ctx := context.Background()
		fillLanes(t, st)
		log := &records{}
		c := serve(t, newDashboard(t, st, dashboard.Options{Actions: true, Authorize: allow, Logger: slog.New(log)}), "")
		_, page := c.get("/limits?queue=flow%2Fq")
		for _, want := range []string{
			`href="/limits/set?queue=flow%2fq"`, `href="/limits/delete?queue=flow%2fq"`,
			`href="/limits/set?queue=flow%2fq&amp;key=a"`, `href="/limits/delete?queue=flow%2fq&amp;key=b"`, `id="key-limit"`,
		} {
			if !strings.Contains(page, want) {
				t.Errorf("limits page lacks %s:\n%s", want, page)
			}
		}
		limits := func() map[string]core.Limit {
			t.Helper()
			ls, err := st.Limits(ctx, "flow/q")
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]core.Limit{}
			for _, l := range ls {
				out[l.Key] = l
			}
			return out
		}
		setA := "/limits/set?" + url.Values{"queue": {"flow/q"}, "key": {"a"}}.Encode()
		_, confirm := c.confirm("/limits/set?" + url.Values{"queue": {"flow/q"}, "key": {"b"}}.Encode())
		if !strings.Contains(confirm, `name="concurrency" value="1"`) || !strings.Contains(confirm, `name="per" value="1m0s"`) || !strings.Contains(confirm, `name="weight" value="3"`) {
			t.Errorf("the set form is not filled with key b's limit:\n%s", confirm)
		}
		code, body := c.act(setA, url.Values{"concurrency": {"4"}, "rate": {"10"}, "per": {"1s"}, "burst": {"2"}})
		wantStatus(t, "set a's limit", code, http.StatusOK, body)
		want := core.Limit{Queue: "flow/q", Key: "a", Concurrency: 4, Rate: 10, Per: time.Second, Burst: 2, Weight: 1}
		if got := limits()["a"]; got != want {
			t.Errorf("a's limit is %+v, want %+v", got, want)
		}
		if !strings.Contains(html.UnescapeString(body), `Set: the limit of key "a" of queue "flow/q" is now concurrency 4, rate 10/1s burst 2.`) {
			t.Errorf("outcome:\n%s", body)
		}
		// Refused input: the store's reason, a 400, nothing changed.
		for _, bad := range []struct {
			form url.Values
			says string
		}{
			{url.Values{"concurrency": {"-1"}}, "Concurrency: -1 is outside"},
			{url.Values{"rate": {"5"}}, "Per: 0s is outside"},
			{url.Values{"burst": {"3"}}, "Rate: is 0, but Per or Burst is set"},
			{url.Values{"weight": {"abc"}}, `weight: "abc" is not a whole number`},
			{url.Values{"per": {"soon"}}, `per: "soon" is not a duration`},
		} {
			code, body := c.act(setA, bad.form)
			wantStatus(t, "set "+bad.form.Encode(), code, http.StatusBadRequest, body)
			if !strings.Contains(html.UnescapeString(body), bad.says) {
				t.Errorf("set %s: the outcome does not say %q:\n%s", bad.form.Encode(), bad.says, body)
			}
		}
		if got := limits()["a"]; got != want {
			t.Errorf("a's limit is %+v after refused sets, want %+v", got, want)
		}
		// The queue's default, then deletes.
		code, body = c.act("/limits/set?queue=flow%2Fq", url.Values{"per_process": {"1"}})
		wantStatus(t, "set the default", code, http.StatusOK, body)
		if got := limits()[""]; got != (core.Limit{Queue: "flow/q", PerProcess: 1, Weight: 1}) {
			t.Errorf("default is %+v, want per process 1", got)
		}
		for _, path := range []string{"/limits/delete?queue=flow%2Fq&key=a", "/limits/delete?queue=flow%2Fq"} {
			code, body := c.act(path, nil)
			wantStatus(t, "POST "+path, code, http.StatusOK, body)
		}
		if got := limits(); len(got) != 1 || got["b"].Concurrency != 1 {
			t.Errorf("limits after the deletes: %+v, want b's alone", got)
		}
		// The trail names the action, the queue, the key and the fields.
		var done, refused int
		for _, rec := range log.take() {
			if rec.msg != "dashboard action" {
				continue
			}
			switch rec.attrs["outcome"] {
			case "done":
				done++
			case "bad-request":
				refused++
			}
			if rec.attrs["queue"] != "flow/q" || !strings.HasSuffix(rec.attrs["action"], "-limit") {
				t.Errorf("audit record %+v", rec.attrs)
			}
			if rec.attrs["action"] == "set-limit" && rec.attrs["key"] == "a" && rec.attrs["outcome"] == "done" && rec.attrs["concurrency"] != "4" {
				t.Errorf("audit record of a's set lacks its fields: %+v", rec.attrs)
			}
		}
		if done != 4 || refused != 5 {
			t.Errorf("audit: %d done, %d bad-request; want 4, 5", done, refused)
		}
		// Read-only: refused, nothing changed.
		ro := serve(t, newDashboard(t, st, dashboard.Options{}), "")
		for _, path := range []string{"/limits/set?queue=flow%2Fq&key=b", "/limits/delete?queue=flow%2Fq&key=b"} {
			code, body := ro.get(path)
			wantStatus(t, "GET "+path, code, http.StatusForbidden, body)
			code, body = ro.post(path, url.Values{"csrf": {"x"}, "concurrency": {"9"}}, nil)
			wantStatus(t, "POST "+path, code, http.StatusForbidden, body)
		}
		if got := limits()["b"]; got.Concurrency != 1 {
			t.Errorf("b's limit changed on a read-only dashboard: %+v", got)
		}
		// A target without a queue is a 400.
		code, body = c.get("/limits/set")
		wantStatus(t, "GET /limits/set", code, http.StatusBadRequest, body)
	})
}
