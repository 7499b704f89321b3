package dashboard_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dashboard"
	"github.com/plenumdb/plenum/migrations"
)

// Queues and kinds stored before the store refused unsafe names (or by a
// writer outside it) can still be browsed: every link the dashboard makes
// to them is a page it serves, which lists their items.
func TestLinks_StoredUnsafeNamesBrowsable(t *testing.T) {
	eachDatabase(t, func(t *testing.T, st *core.Store) {
		ctx := context.Background()
		unsafe := []string{"esc\x1b]0;pwned\x07\x1b[31mRED", "nl\nq\tx", "rlo\u202etxt", " spaced\n"}
		ids := map[string]string{}
		items := migrations.NamesFor(st.Prefix()).Items
		for _, name := range unsafe {
			enq, err := st.Enqueue(ctx, core.ItemSpec{Queue: "legacy"})
			if err != nil {
				t.Fatal(err)
			}
			id := enq[0].ID
			if _, err := st.DB().ExecContext(ctx, st.Dialect().Rebind("UPDATE "+items+" SET queue = ?, kind = ? WHERE id = ?"), name, name, st.Dialect().UUID(id)); err != nil {
				t.Fatal(err)
			}
			ids[name] = id.String()
		}
		c := serve(t, newDashboard(t, st, dashboard.Options{}), "")
		_, body := c.get("/")
		hrefRE := regexp.MustCompile(`\shref="(/items\?queue=[^"&]*)"`)
		links := hrefRE.FindAllStringSubmatch(body, -1)
		if len(links) != len(unsafe) {
			t.Fatalf("the overview links to %d queues, want %d:\n%s", len(links), len(unsafe), body)
		}
		for _, m := range links {
			path := html.UnescapeString(m[1])
			code, page := c.get(path)
			wantStatus(t, "GET "+path, code, http.StatusOK, page)
			found := 0
			for _, id := range ids {
				if strings.Contains(page, id) {
					found++
				}
			}
			if found != 1 {
				t.Errorf("GET %s lists %d of the items, want its queue's one", path, found)
			}
			// The item's own page links back to its queue and kind.
			for name, id := range ids {
				if strings.Contains(page, id) {
					if code, p := c.get("/items?queue=" + url.QueryEscape(name) + "&kind=" + url.QueryEscape(name)); code != http.StatusOK || !strings.Contains(p, id) {
						t.Errorf("items of queue and kind %+q: %d, listed: %v", name, code, strings.Contains(p, id))
					}
				}
			}
		}
	})
}
