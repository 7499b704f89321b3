package browsertest

import (
	"net/http"
	"testing"
)

// env is what a suite's checks share: one browser, one workload, the
// dashboard's URL, and where screenshots go.
type env struct {
	b    *browser
	wl   *workload
	base string
	dir  string
}

// The read-only dashboard, in one browser over one workload: every page,
// the stuck fan-ins, the mount under a prefix, the filters, pagination,
// and no action anywhere.
func TestBrowserReadOnly(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	wl := newWorkload(t)
	e := &env{b: b, wl: wl, base: serve(t, wl, "", false, false), dir: screenshotDir(t)}
	t.Logf("screenshots in %s", e.dir)
	for _, c := range []struct {
		name string
		fn   func(*testing.T, *env)
	}{
		{"PagesShowTheWorkloadAsText", pagesShowTheWorkloadAsText},
		{"StuckListsTheUnfiredBarrier", stuckListsTheUnfiredBarrier},
		{"ItemsFilterListsWhatTheDatabaseHas", itemsFilterListsWhatTheDatabaseHas},
		{"ItemsPaginationEveryItemOnce", itemsPaginationEveryItemOnce},
		{"ActionURLsRefused", readOnlyActionURLsRefused},
		{"PrefixLinksStayUnderTheMount", prefixLinksStayUnderTheMount},
		{"GraphShowsTheRunsStates", graphShowsTheRunsStates},
		{"TagsAndMetadataFilterTheItems", tagsAndMetadataFilterTheItems},
		{"SchedulesShowTheStoredOnes", schedulesShowTheStoredOnes},
		{"SealedValuesShowTheirKeyID", sealedValuesShowTheirKeyID},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, e) })
	}
}

// The dashboard with actions on, behind an Authorize hook: revive,
// cancel and signal through their confirm pages change the database, and
// a form without its CSRF token changes nothing. The worker is stopped
// first, so that nothing it runs undoes what the actions did (a revived
// flaky item would fail again).
func TestBrowserActions(t *testing.T) {
	t.Parallel()
	b := newBrowser(t)
	wl := newWorkload(t)
	wl.stop(t)
	e := &env{b: b, wl: wl, base: serve(t, wl, "", false, true), dir: screenshotDir(t)}

	// Without the header the Authorize hook wants, nothing is served.
	if p := b.open(t, e.base+"/"); p.Status != http.StatusForbidden {
		t.Fatalf("unauthorized: status %d, want 403", p.Status)
	}
	b.takeErrors()
	b.signIn(t)
	t.Run("ChangeTheDatabase", func(t *testing.T) { actionsChangeTheDatabase(t, e) })
	t.Run("RefuseAFormWithoutToken", func(t *testing.T) { actionsRefuseAFormWithoutToken(t, e) })
}
