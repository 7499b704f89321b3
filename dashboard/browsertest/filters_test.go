package browsertest

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
)

// Choosing a state and a queue in the filters form and submitting it
// lists exactly the items the database has in that state and queue.
func itemsFilterListsWhatTheDatabaseHas(t *testing.T, e *env) {
	b, wl := e.b, e.wl
	base := e.base
	dir := e.dir

	b.open(t, base+"/items")
	b.do(t, "choose dead", chromedp.SetValue(chromedp.CSS(`#filters select[name="state"]`), "dead"))
	p := b.click(t, "#apply")
	if u, _ := url.Parse(p.URL); u.Query().Get("state") != "dead" {
		t.Fatalf("filtered page %s: no state=dead", p.URL)
	}
	got := b.ids(t, "#items tbody tr[data-id]")
	want := idsWhere(t, wl.store, func(it core.Item) bool { return it.State == core.StateDead })
	if !sameSet(got, want) {
		t.Errorf("state=dead lists %v, the database has %v", got, want)
	}
	if n := b.count(t, `#items tbody [data-state]:not([data-state="dead"])`); n != 0 {
		t.Errorf("state=dead shows %d rows of another state", n)
	}
	b.screenshot(t, dir, "items-dead")

	// Both filters: the queue typed in, the state chosen.
	b.do(t, "choose available in later",
		chromedp.SetValue(chromedp.CSS(`#filters select[name="state"]`), "available"),
		chromedp.SetValue(chromedp.CSS(`#filters input[name="queue"]`), "later"),
	)
	b.click(t, "#apply")
	got = b.ids(t, "#items tbody tr[data-id]")
	want = idsWhere(t, wl.store, func(it core.Item) bool { return it.State == core.StateAvailable && it.Queue == "later" })
	if len(want) != 4 || !sameSet(got, want) {
		t.Errorf("queue=later state=available lists %v, the database has %v", got, want)
	}

	// A kind, from the URL the form makes, and a filter matching nothing.
	b.open(t, base+"/items?kind=report.part&queue=stuck")
	if got := b.ids(t, "#items tbody tr[data-id]"); len(got) != 4 {
		t.Errorf("kind=report.part queue=stuck lists %d items, want the 4 stuck parts", len(got))
	}
	b.open(t, base+"/items?queue=nosuchqueue")
	if b.count(t, "#items tbody tr") != 0 || b.count(t, "#empty") != 1 {
		t.Errorf("a queue with no items: want the empty note and no rows")
	}
	// A bad filter is a clear 400, not a page of everything.
	if p := b.open(t, base+"/items?state=bogus"); p.Status != http.StatusBadRequest {
		t.Errorf("state=bogus: status %d, want 400", p.Status)
	}
	b.takeErrors() // the 400 is logged by the browser as a failed load
	b.checkClean(t, "filters")
}

// Following "next" from the first page to the last lists every item of
// the filter once: no id repeats, none is missed.
func itemsPaginationEveryItemOnce(t *testing.T, e *env) {
	b, wl := e.b, e.wl
	base := e.base

	for _, filter := range []string{"queue=email", ""} {
		b.open(t, base+"/items?"+filter)
		seen := map[string]bool{}
		pages := 0
		for {
			pages++
			for _, id := range b.ids(t, "#items tbody tr[data-id]") {
				if seen[id] {
					t.Fatalf("%q: item %s on two pages (page %d)", filter, id, pages)
				}
				seen[id] = true
			}
			if b.count(t, `a[rel="next"]`) == 0 {
				break
			}
			if pages > 100 {
				t.Fatalf("%q: more than 100 pages", filter)
			}
			b.click(t, `a[rel="next"]`)
		}
		want := idsWhere(t, wl.store, func(it core.Item) bool { return filter == "" || it.Queue == "email" })
		if len(seen) != len(want) {
			t.Errorf("%q: %d items over %d pages, the database has %d", filter, len(seen), pages, len(want))
		}
		for _, id := range want {
			if !seen[id] {
				t.Errorf("%q: item %s never listed", filter, id)
			}
		}
		if pages < 2 {
			t.Errorf("%q: one page only: the test proves nothing about pagination", filter)
		}
		b.checkClean(t, "pagination "+filter)
	}
}

// idsWhere reads every item of the database and returns the ids of
// those keep accepts, through core's public reads (Items, in keyset
// pages).
func idsWhere(t *testing.T, store *core.Store, keep func(core.Item) bool) []string {
	t.Helper()
	var out []string
	before := uuid.Nil
	for {
		page, err := browse.New(store).Items(context.Background(), browse.ItemFilter{Before: before, Limit: 500})
		if err != nil {
			t.Fatal(err)
		}
		items := page.Items
		for _, it := range items {
			if keep(it) {
				out = append(out, it.ID.String())
			}
		}
		if len(items) < 500 {
			return out
		}
		before = items[len(items)-1].ID
	}
}
