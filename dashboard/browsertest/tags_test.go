package browsertest

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/plenumdb/plenum/core"
)

// An item's tags and metadata show on its page; its tag's link lists the
// items carrying the tag, and the filter form's metadata fields those
// with the key and value, each exactly as the database has them.
func tagsAndMetadataFilterTheItems(t *testing.T, e *env) {
	b, wl := e.b, e.wl
	ctx := t.Context()
	// A queue no worker of the workload serves: the items stay put.
	res, err := wl.store.Enqueue(ctx,
		core.ItemSpec{Queue: "tagged", Kind: "invoice.send", Tags: []string{"vip", "eu"}, Metadata: map[string]string{"tenant": "acme"}},
		core.ItemSpec{Queue: "tagged", Kind: "invoice.send", Tags: []string{"eu"}, Metadata: map[string]string{"tenant": "initech"}},
		core.ItemSpec{Queue: "tagged", Kind: "invoice.send"},
	)
	if err != nil {
		t.Fatal(err)
	}
	vip, eu, none := res[0].ID.String(), res[1].ID.String(), res[2].ID.String()

	p := b.open(t, e.base+"/items/"+vip)
	if p.Status != http.StatusOK {
		t.Fatalf("item page: status %d", p.Status)
	}
	if got := eval[string](t, b, `document.getElementById('tags').textContent`); !strings.Contains(got, "vip") || !strings.Contains(got, "eu") {
		t.Errorf("#tags holds %q, want vip and eu", got)
	}
	if got := eval[string](t, b, `document.getElementById('metadata').innerText`); !strings.Contains(got, "tenant") || !strings.Contains(got, "acme") {
		t.Errorf("#metadata shows %q, want tenant = acme", got)
	}
	b.checkClean(t, "item-tags")
	b.screenshot(t, e.dir, "item-tags")

	p = b.click(t, `#tags a[href$="?tag=vip"]`)
	if u, _ := url.Parse(p.URL); u.Query().Get("tag") != "vip" {
		t.Fatalf("the tag's link led to %s", p.URL)
	}
	if got := b.ids(t, "#items tbody tr[data-id]"); !sameSet(got, []string{vip}) {
		t.Errorf("tag=vip lists %v, want only %s", got, vip)
	}

	b.open(t, e.base+"/items?queue=tagged")
	b.do(t, "filter on tenant = initech",
		chromedp.SetValue(chromedp.CSS(`#filters input[name="meta_key"]`), "tenant"),
		chromedp.SetValue(chromedp.CSS(`#filters input[name="meta_value"]`), "initech"),
	)
	b.click(t, "#apply")
	if got := b.ids(t, "#items tbody tr[data-id]"); !sameSet(got, []string{eu}) {
		t.Errorf("tenant=initech lists %v, want only %s", got, eu)
	}
	b.open(t, e.base+"/items?queue=tagged&tag=eu")
	if got := b.ids(t, "#items tbody tr[data-id]"); !sameSet(got, []string{vip, eu}) || contains(got, none) {
		t.Errorf("tag=eu lists %v, want %s and %s", got, vip, eu)
	}
	b.checkClean(t, "items-tag")
	b.screenshot(t, e.dir, "items-tag")
}

// The schedules kept in the database show on their page with their
// timing, zone, item and state.
func schedulesShowTheStoredOnes(t *testing.T, e *env) {
	b, wl := e.b, e.wl
	ctx := t.Context()
	for _, sp := range []core.ScheduleSpec{
		{Name: "nightly-invoices", Cron: "30 2 * * *", TimeZone: "Europe/Paris", Item: core.ItemSpec{Queue: "billing", Kind: "invoice.batch"}},
		{Name: "hourly-sync", Every: time.Hour, Item: core.ItemSpec{Queue: "sync"}},
	} {
		if _, err := wl.store.SetSchedule(ctx, sp); err != nil {
			t.Fatal(err)
		}
	}
	if err := wl.store.PauseSchedule(ctx, "hourly-sync"); err != nil {
		t.Fatal(err)
	}
	p := b.open(t, e.base+"/schedules")
	if p.Status != http.StatusOK {
		t.Fatalf("schedules: status %d", p.Status)
	}
	row := func(name, cell string) string {
		return eval[string](t, b, `document.querySelector('#schedules tr[data-name="`+name+`"] td.`+cell+`').innerText`)
	}
	if got := row("nightly-invoices", "timing"); !strings.Contains(got, "30 2 * * *") || !strings.Contains(got, "Europe/Paris") {
		t.Errorf("nightly-invoices' timing shows %q, want its cron and zone", got)
	}
	if got := row("nightly-invoices", "item"); got != "billing / invoice.batch" {
		t.Errorf("nightly-invoices' item shows %q", got)
	}
	if got := row("nightly-invoices", "state"); got != "active" {
		t.Errorf("nightly-invoices shows %q, want active", got)
	}
	if got := row("hourly-sync", "state"); got != "paused" {
		t.Errorf("hourly-sync shows %q, want paused", got)
	}
	b.checkClean(t, "schedules")
	b.screenshot(t, e.dir, "schedules")
}
