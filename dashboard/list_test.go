package dashboard_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dashboard"
)

var (
	rowRE  = regexp.MustCompile(`<tr data-id="([0-9a-f-]{36})"`)
	nextRE = regexp.MustCompile(`<a href="([^"]+)" rel="next"`)
)

// walk follows a list's rel="next" links from path and returns every row
// id in order, failing on a page that is not 200.
func walk(t *testing.T, c *client, base, path string) (ids []string, pages int) {
	t.Helper()
	for path != "" && pages < 100 {
		code, body := c.get(path)
		wantStatus(t, "GET "+path, code, http.StatusOK, body)
		pages++
		for _, m := range rowRE.FindAllStringSubmatch(body, -1) {
			ids = append(ids, m[1])
		}
		path = ""
		if m := nextRE.FindStringSubmatch(body); m != nil {
			path = strings.TrimPrefix(html.UnescapeString(m[1]), base)
		}
	}
	return ids, pages
}

// TestItems_FiltersAndKeysetPages: the filters choose the rows, and the
// "older" links page through all of them newest first, none twice.
func TestItems_FiltersAndKeysetPages(t *testing.T) {
	eachDatabase(t, func(t *testing.T, st *core.Store) {
		ctx := context.Background()
		var want []string
		for i := range 7 {
			kind := "even"
			if i%2 == 1 {
				kind = "odd"
			}
			e, err := st.Enqueue(ctx, core.ItemSpec{Queue: "pages", Kind: kind})
			if err != nil {
				t.Fatal(err)
			}
			want = append([]string{e[0].ID.String()}, want...) // newest first
		}
		if _, err := st.Enqueue(ctx, core.ItemSpec{Queue: "other", Kind: "even"}); err != nil {
			t.Fatal(err)
		}
		c := serve(t, newDashboard(t, st, dashboard.Options{}), "")
		got, pages := walk(t, c, "", "/items?queue=pages&limit=3")
		if fmt.Sprint(got) != fmt.Sprint(want) || pages != 3 {
			t.Errorf("queue=pages in pages of 3: %d pages\n got %v\nwant %v", pages, got, want)
		}
		got, _ = walk(t, c, "", "/items?queue=pages&kind=odd&limit=2")
		if fmt.Sprint(got) != fmt.Sprint([]string{want[1], want[3], want[5]}) {
			t.Errorf("kind=odd: got %v", got)
		}
		got, _ = walk(t, c, "", "/items?queue=pages&state=completed")
		if len(got) != 0 {
			t.Errorf("state=completed: got %v", got)
		}
		got, _ = walk(t, c, "", "/items?state=available&limit=500")
		if len(got) != 8 {
			t.Errorf("state=available: %d rows, want 8", len(got))
		}
		// The filters form keeps what was asked.
		_, body := c.get("/items?queue=pages&state=available&kind=odd")
		for _, w := range []string{`id="filters"`, `name="queue" value="pages"`, `value="available" selected`, `name="kind" value="odd"`} {
			if !strings.Contains(body, w) {
				t.Errorf("filters form lacks %q", w)
			}
		}
	})
}

// TestItems_KindSearchBoundedAndResumable: a kind's page stops at the
// search bound, says so, and its "search older" link goes on until every
// match is listed; a kind matching nothing says it searched.
func TestItems_KindSearchBoundedAndResumable(t *testing.T) {
	eachDatabase(t, func(t *testing.T, st *core.Store) {
		ctx := context.Background()
		var want []string
		for i := range 12 {
			kind := "common"
			if i%5 == 1 {
				kind = "rare"
			}
			e, err := st.Enqueue(ctx, core.ItemSpec{Queue: "search", Kind: kind})
			if err != nil {
				t.Fatal(err)
			}
			if kind == "rare" {
				want = append([]string{e[0].ID.String()}, want...)
			}
		}
		c := serve(t, newDashboard(t, st, dashboard.Options{SearchRows: 5}), "")
		got, pages := walk(t, c, "", "/items?queue=search&state=available&kind=rare")
		if fmt.Sprint(got) != fmt.Sprint(want) || pages < 3 {
			t.Errorf("kind=rare searching 5 rows a page: %d pages\n got %v\nwant %v", pages, got, want)
		}
		code, body := c.get("/items?queue=search&state=available&kind=nosuch")
		wantStatus(t, "GET kind=nosuch", code, http.StatusOK, body)
		if !strings.Contains(body, `id="searched"`) || !strings.Contains(body, "Searched the newest 5 items") || !strings.Contains(body, "search older") || strings.Contains(body, `id="empty"`) {
			t.Errorf("kind=nosuch, searched 5 of 12 rows: the page does not say it searched:\n%s", body)
		}
	})
}

// TestItems_KindSearchPagesCoverWhatTheySearched: "search older" pages
// move by the rows searched, not by the matches found. Six queues filled
// one after the other, 120 items, searched 30 rows a page: every match in
// five pages at most, each once.
func TestItems_KindSearchPagesCoverWhatTheySearched(t *testing.T) {
	eachDatabase(t, func(t *testing.T, st *core.Store) {
		ctx := context.Background()
		var want []string
		for q := range 6 {
			var specs []core.ItemSpec
			for i := range 20 {
				kind := "common"
				if i%7 == 3 {
					kind = "rare"
				}
				specs = append(specs, core.ItemSpec{Queue: fmt.Sprintf("spread-%d", q), Kind: kind})
			}
			e, err := st.Enqueue(ctx, specs...)
			if err != nil {
				t.Fatal(err)
			}
			for i, it := range e {
				if specs[i].Kind == "rare" {
					want = append(want, it.ID.String())
				}
			}
		}
		slices.Sort(want)
		slices.Reverse(want)
		c := serve(t, newDashboard(t, st, dashboard.Options{SearchRows: 30}), "")
		got, pages := walk(t, c, "", "/items?kind=rare")
		if fmt.Sprint(got) != fmt.Sprint(want) || pages > 5 {
			t.Errorf("kind=rare over 120 items, 30 searched a page: %d pages, want 5 at most\n got %v\nwant %v", pages, got, want)
		}
	})
}

// TestRuns_FiltersAndPages pages through runs by name and state.
func TestRuns_FiltersAndPages(t *testing.T) {
	eachDatabase(t, func(t *testing.T, st *core.Store) {
		ctx := context.Background()
		var want []string
		for i := range 5 {
			rc, _, err := st.CreateRun(ctx, core.RunSpec{Name: "nightly", Key: fmt.Sprint(i)}, core.ItemSpec{Queue: "q"})
			if err != nil {
				t.Fatal(err)
			}
			want = append([]string{rc.ID.String()}, want...)
		}
		if _, _, err := st.CreateRun(ctx, core.RunSpec{Name: "hourly"}, core.ItemSpec{Queue: "q"}); err != nil {
			t.Fatal(err)
		}
		c := serve(t, newDashboard(t, st, dashboard.Options{}), "")
		got, pages := walk(t, c, "", "/runs?name=nightly&state=running&limit=2")
		if fmt.Sprint(got) != fmt.Sprint(want) || pages != 3 {
			t.Errorf("runs: %d pages\n got %v\nwant %v", pages, got, want)
		}
		got, _ = walk(t, c, "", "/runs?state=halted")
		if len(got) != 0 {
			t.Errorf("state=halted: %v", got)
		}
	})
}

// TestMount_LinksFollowThePrefix: under Options.Prefix and under
// http.StripPrefix alike, every link of a page stays under the mount path
// and leads to a page.
func TestMount_LinksFollowThePrefix(t *testing.T) {
	t.Parallel()
	st := openStore(t, databases[0])
	f := fill(t, st)
	own := http.NewServeMux()
	own.Handle("/admin/plenum/", newDashboard(t, st, dashboard.Options{Prefix: "/admin/plenum", Actions: true, Authorize: allow}))
	stripped := http.NewServeMux()
	stripped.Handle("/ops/dash/", http.StripPrefix("/ops/dash", newDashboard(t, st, dashboard.Options{Actions: true, Authorize: allow})))
	hrefRE := regexp.MustCompile(`\s(?:href|action)="([^"]*)"`)
	for _, tc := range []struct {
		name  string
		h     http.Handler
		mount string
	}{{"Prefix", own, "/admin/plenum"}, {"StripPrefix", stripped, "/ops/dash"}} {
		t.Run(tc.name, func(t *testing.T) {
			c := serve(t, tc.h, tc.mount)
			seen := map[string]bool{}
			for _, start := range []string{"/", "/runs/" + f.run.String(), "/items/" + f.dead.String(), "/items/" + f.dead.String() + "/revive"} {
				_, body := c.get(start)
				for _, m := range hrefRE.FindAllStringSubmatch(body, -1) {
					href := html.UnescapeString(m[1])
					if !strings.HasPrefix(href, tc.mount+"/") {
						t.Errorf("%s: link %q is not under %s", start, href, tc.mount)
						continue
					}
					seen[strings.TrimPrefix(href, tc.mount)] = true
				}
			}
			for path := range seen {
				if code, body := c.get(path); code != http.StatusOK {
					t.Errorf("link %s: %d\n%s", path, code, body)
				}
			}
			if len(seen) < 10 {
				t.Errorf("only %d links followed", len(seen))
			}
			// The action still works under the mount.
			code, body := c.act("/items/"+f.dead.String()+"/revive", nil)
			want := http.StatusOK
			if tc.name == "StripPrefix" {
				want = http.StatusConflict // revived under Prefix already
			}
			wantStatus(t, "revive", code, want, body)
		})
	}
	// The prefix alone redirects to its root page; a path outside it is
	// not the dashboard's.
	c := serve(t, newDashboard(t, st, dashboard.Options{Prefix: "/admin/plenum"}), "")
	if code, _ := c.get("/admin/plenum"); code != http.StatusFound {
		t.Errorf("GET /admin/plenum: %d, want a redirect", code)
	}
	if code, _ := c.get("/admin/plenumx/items"); code != http.StatusNotFound {
		t.Errorf("GET /admin/plenumx/items: %d, want 404", code)
	}
}
