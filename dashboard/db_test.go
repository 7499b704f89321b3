package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dashboard"
	"github.com/plenumdb/plenum/internal/testkit/testdb"
	"github.com/plenumdb/plenum/migrations"
)

// database is one database the tests run on.
type database = testdb.Database

// databases are SQLite, PostgreSQL and MySQL/MariaDB (package testdb).
var databases = testdb.All("dashboard.db")

// eachDatabase runs fn in a parallel subtest per database, with a store on
// tables of the subtest's own.
func eachDatabase(t *testing.T, fn func(t *testing.T, st *core.Store)) {
	t.Parallel()
	for _, dbase := range databases {
		t.Run(dbase.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, openStore(t, dbase))
		})
	}
}

// openStore opens a store on new tables of dbase, dropped at the end.
func openStore(t *testing.T, dbase database) *core.Store {
	t.Helper()
	db := dbase.Open(t)
	// The servers are shared: keep the pool small.
	db.SetMaxOpenConns(4)
	prefix := fmt.Sprintf("dash%08x_", rand.Uint32())
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := core.Open(ctx, db, dbase.Dialect, core.Options{Prefix: prefix, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := migrations.Drop(cctx, db, dbase.Dialect, prefix); err != nil {
			t.Errorf("drop tables %s*: %v", prefix, err)
		}
	})
	return st
}

// fixture is what fill made: one of each thing the pages show.
type fixture struct {
	owner     uuid.UUID
	available uuid.UUID // an available item with a <script> payload
	completed uuid.UUID
	dead      uuid.UUID // a dead item of no run
	claimed   uuid.UUID

	run       uuid.UUID // a run with a fan-out and a waiting step
	parent    uuid.UUID // the run's step that fanned out
	barrier   uuid.UUID
	waiting   uuid.UUID // the run's step waiting for "approve"
	halted    uuid.UUID // a run halted by a dead step
	haltedDed uuid.UUID // that dead step
}

// xss is a payload that must render as text.
const xss = `{"note":"<script>alert(1)</script>"}`

// fill makes, through the store's own API, items in every state, an owner
// holding a claim, a run with a fan-out barrier and a step waiting for a
// signal, and a halted run.
func fill(t *testing.T, st *core.Store) fixture {
	t.Helper()
	ctx := context.Background()
	var f fixture
	var err error
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	f.owner, err = st.RegisterOwner(ctx, core.RegisterOwnerParams{Host: "test-host", PID: 4242})
	must(err)
	claim := func(queue string) core.Claim {
		t.Helper()
		cs, err := st.Claim(ctx, core.ClaimParams{Queue: queue, Owner: f.owner, Limit: 1, Lease: time.Hour})
		must(err)
		if len(cs) != 1 {
			t.Fatalf("claim %s: got %d items", queue, len(cs))
		}
		return cs[0]
	}
	enq := func(spec core.ItemSpec) uuid.UUID {
		t.Helper()
		e, err := st.Enqueue(ctx, spec)
		must(err)
		return e[0].ID
	}

	f.completed = enq(core.ItemSpec{Queue: "emails", Kind: "send", Payload: json.RawMessage(`{"to":"a@example.com"}`)})
	must(st.Complete(ctx, claim("emails"), json.RawMessage(`{"sent":true}`)))
	f.dead = enq(core.ItemSpec{Queue: "emails", Kind: "send", Payload: json.RawMessage(`{"to":"b@example.com"}`), MaxAttempts: 1})
	_, err = st.Fail(ctx, claim("emails"), core.FailParams{Error: "smtp: connection refused"})
	must(err)
	f.claimed = enq(core.ItemSpec{Queue: "emails", Kind: "send"})
	claim("emails")
	f.available = enq(core.ItemSpec{Queue: "emails", Kind: "<b>bold</b>", Payload: json.RawMessage(xss)})

	// A run: its first step fans out to three children; a second step of
	// it waits for a signal.
	rc, first, err := st.CreateRun(ctx, core.RunSpec{Name: "ingest", Key: "ingest-1", Input: json.RawMessage(`{"files":3}`)},
		core.ItemSpec{Queue: "pipe", Kind: "split"}, core.ItemSpec{Queue: "approve", Kind: "approval"})
	must(err)
	f.run, f.parent, f.waiting = rc.ID, first[0].ID, first[1].ID
	split := claim("pipe")
	res, err := st.Expand(ctx, split, core.ExpandParams{
		Barrier: core.BarrierSpec{Name: "files", Join: core.JoinSpec{Queue: "pipe", Kind: "merge"}},
		Next: func(context.Context, string) (core.ChildPage, error) {
			return core.ChildPage{Done: true, Children: []core.ChildSpec{{Key: "a", Kind: "file"}, {Key: "b", Kind: "file"}, {Key: "c", Kind: "file"}}}, nil
		},
		CompleteParent: true,
	})
	must(err)
	f.barrier = res.Barrier.ID
	must(st.Complete(ctx, claim("pipe"), nil)) // one child arrives
	_, err = st.Fence(ctx, claim("approve"), func(ctx context.Context, fd *core.Fenced) error {
		r, err := fd.Await(ctx, core.AwaitParams{Name: "approve"})
		if err == nil && !r.Waiting {
			err = fmt.Errorf("await: not waiting: %+v", r)
		}
		return err
	})
	must(err)

	// A halted run: its only step fails its last attempt.
	hc, hfirst, err := st.CreateRun(ctx, core.RunSpec{Name: "report", Key: "report-1"}, core.ItemSpec{Queue: "reports", Kind: "render", MaxAttempts: 1})
	must(err)
	f.halted, f.haltedDed = hc.ID, hfirst[0].ID
	_, err = st.Fail(ctx, claim("reports"), core.FailParams{Error: "template missing"})
	must(err)
	return f
}

// client is a browser stand-in on one dashboard server: a cookie jar, and
// the Origin a browser sends with a form.
type client struct {
	t    *testing.T
	base string // the server's URL and the dashboard's mount path
	http *http.Client
}

// serve starts a test server with h mounted by mount (h itself when nil)
// at path.
func serve(t *testing.T, h http.Handler, path string) *client {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	return &client{t: t, base: srv.URL + path, http: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// newDashboard is dashboard.New that fails the test on an error.
func newDashboard(t *testing.T, st *core.Store, o dashboard.Options) http.Handler {
	t.Helper()
	h, err := dashboard.New(st, o)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// get fetches path under the dashboard and returns the status and body.
func (c *client) get(path string) (int, string) {
	c.t.Helper()
	resp, err := c.http.Get(c.base + path)
	if err != nil {
		c.t.Fatal(err)
	}
	return readBody(c.t, resp)
}

// post sends form to path as a browser on this origin would (Origin set),
// with edit changing the request before it goes.
func (c *client) post(path string, form url.Values, edit func(*http.Request)) (int, string) {
	c.t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	u, _ := url.Parse(c.base)
	req.Header.Set("Origin", u.Scheme+"://"+u.Host)
	if edit != nil {
		edit(req)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return readBody(c.t, resp)
}

func readBody(t *testing.T, resp *http.Response) (int, string) {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

var tokenRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// confirm opens an action's confirm page and returns the form's token and
// the page.
func (c *client) confirm(path string) (string, string) {
	c.t.Helper()
	code, body := c.get(path)
	if code != http.StatusOK {
		c.t.Fatalf("GET %s: %d\n%s", path, code, body)
	}
	m := tokenRE.FindStringSubmatch(body)
	if m == nil {
		c.t.Fatalf("GET %s: no csrf token in the form\n%s", path, body)
	}
	return m[1], body
}

// act confirms then posts the action at path with extra form fields, and
// returns the outcome's status and page.
func (c *client) act(path string, extra url.Values) (int, string) {
	c.t.Helper()
	token, _ := c.confirm(path)
	form := url.Values{"csrf": {token}}
	for k, v := range extra {
		form[k] = v
	}
	return c.post(path, form, nil)
}

// wantStatus fails the test unless code is want.
func wantStatus(t *testing.T, what string, code, want int, body string) {
	t.Helper()
	if code != want {
		t.Fatalf("%s: status %d, want %d\n%s", what, code, want, body)
	}
}
