package browsertest

import (
	"net/http"
	"strings"
	"testing"
)

// pageCase is one page of the dashboard, what it must show, and the
// name of its screenshot.
type pageCase struct {
	name string
	path string
	want []string
}

func (wl *workload) pages() []pageCase {
	return []pageCase{
		{"overview", "/", []string{"Queues", "email", "reports", "later", "stuck", "pipelines"}},
		{"items", "/items", []string{"Items", "email.send", "sms.send"}},
		{"item-xss", "/items/" + wl.xss.String(), []string{xssPayload, alertText, "delivered", "Progress", "1 of 1 (100.0%)", "sending_to"}},
		{"item-dead", "/items/" + wl.dead[0].String(), []string{"dead", xssError, "flaky1@example.com"}},
		{"item-timeout", "/items/" + wl.timedOut.String(), []string{"dead", "deadline"}},
		{"item-available", "/items/" + wl.available[0].String(), []string{"available", "sms.send"}},
		{"runs", "/runs", []string{"Runs", "ingest", "billing", "approval", "release", "longjob"}},
		{"run-completed", "/runs/" + wl.runCompleted.String(), []string{"ingest", "completed", "pipeline.expand", "3 arrived / 3 expected", "fired"}},
		{"run-halted", "/runs/" + wl.runHalted.String(), []string{"billing", "halted", "card declined", alertText}},
		{"run-waiting", "/runs/" + wl.runsWaiting[0].String(), []string{"approval", "approved", "invoice 7"}},
		{"run-release", "/runs/" + wl.runRelease.String(), []string{"release", "pipeline.expand", "1 arrived / 4 expected", "verified"}},
		{"run-running", "/runs/" + wl.runRunning.String(), []string{"longjob", "running", "claimed"}},
		{"pipelines", "/pipelines", []string{"Pipelines", "ingest", "billing", "approval", "release", "longjob"}},
		{"pipeline-release", "/pipelines/release", []string{"Pipeline release", "build", "targets", "deploy", "verify", "signal verified", "collapse", "each"}},
		{"owners", "/owners", []string{"Owners", "dash-worker-1", "report-builder-2"}},
		{"stuck", "/stuck", []string{"Stuck fan-ins", "parts"}},
		{"barrier-stuck", "/barriers/" + wl.stuckBarrier.String(), []string{"parts", "0 arrived", "of 4 expected", "report.part"}},
		{"barrier-fired", "/barriers/" + wl.firedBarrier.String(), []string{"parts", "3 arrived", "of 3 expected"}},
	}
}

// Every page loads with the workload's data in it, payloads holding
// <script> shown as text and never run, no action button (actions are
// off), and no console error (a CSP refusal of an inline style or script
// would be one).
func pagesShowTheWorkloadAsText(t *testing.T, e *env) {
	b, wl := e.b, e.wl
	base := e.base
	dir := e.dir
	for _, pc := range wl.pages() {
		p := b.open(t, base+pc.path)
		if p.Status != http.StatusOK {
			t.Errorf("%s: status %d:\n%s", pc.name, p.Status, clip(p.Text))
			continue
		}
		p.mustContain(t, pc.name, pc.want...)
		// Actions are off: no button or form that would change anything.
		if n := b.count(t, "[data-action], form[method=post], form[method=POST]"); n != 0 {
			t.Errorf("%s: %d action elements with actions off", pc.name, n)
		}
		b.checkClean(t, pc.name)
		b.screenshot(t, dir, pc.name)
	}
	t.Logf("screenshots in %s", dir)
}

// The stuck fan-in is listed, the fired one is not, and the stuck one's
// row leads to its barrier.
func stuckListsTheUnfiredBarrier(t *testing.T, e *env) {
	b, wl := e.b, e.wl
	base := e.base
	b.open(t, base+"/stuck")
	ids := b.ids(t, "#stuck tbody tr[data-id]")
	if !contains(ids, wl.stuckBarrier.String()) || contains(ids, wl.firedBarrier.String()) {
		t.Fatalf("stuck fan-ins %v: want %s and not %s", ids, wl.stuckBarrier, wl.firedBarrier)
	}
	p := b.click(t, `#stuck a[href$="/barriers/`+wl.stuckBarrier.String()+`"]`)
	p.mustContain(t, "barrier", "of 4 expected")
	b.checkClean(t, "stuck")
}

// Mounted under a prefix, by Options.Prefix or behind http.StripPrefix,
// every link of the navigation stays under the prefix and leads to a page
// that loads.
func prefixLinksStayUnderTheMount(t *testing.T, e *env) {
	b, wl := e.b, e.wl
	for _, viaOption := range []bool{true, false} {
		base := serve(t, wl, "/admin/plenum", viaOption, false)
		b.open(t, base+"/")
		hrefs := eval[[]string](t, b, `Array.from(document.querySelectorAll('#nav a, #items a, #queues a, link[rel=stylesheet]')).map(a => a.href)`)
		if len(hrefs) < 5 {
			t.Fatalf("prefix (option %v): only %d links: %v", viaOption, len(hrefs), hrefs)
		}
		for _, h := range hrefs {
			if !strings.HasPrefix(h, base+"/") {
				t.Errorf("prefix (option %v): link %s leaves %s", viaOption, h, base)
			}
		}
		for _, nav := range []string{"items", "runs", "owners", "stuck", "queues"} {
			p := b.click(t, `#nav a[data-nav="`+nav+`"]`)
			if p.Status != http.StatusOK || !strings.HasPrefix(p.URL, base+"/") {
				t.Errorf("prefix (option %v): nav %s led to %s, status %d", viaOption, nav, p.URL, p.Status)
			}
			// The stylesheet loaded: the header is styled, not the
			// browser's default.
			if got := eval[string](t, b, `getComputedStyle(document.querySelector('header.top')).display`); got == "block" {
				t.Errorf("prefix (option %v): nav %s: header not styled (the stylesheet did not load?)", viaOption, nav)
			}
			b.checkClean(t, "prefix "+nav)
		}
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
