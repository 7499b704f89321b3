package browsertest

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// The release run's page draws its pipeline's graph with the states of
// its steps over it: the build completed, the expand fanned out to four
// deploys, one verify signed off and three waiting, the collapse not
// reached. Every box is drawn wide enough for its text, in the browser's
// own fonts, and nothing is refused by the page's CSP. The graph is saved
// as graph-run-release.png.
func graphShowsTheRunsStates(t *testing.T, e *env) {
	b := e.b
	p := b.open(t, e.base+"/runs/"+e.wl.runRelease.String())
	if p.Status != http.StatusOK {
		t.Fatalf("status %d:\n%s", p.Status, clip(p.Text))
	}
	p.mustContain(t, "run-release graph", "1 arrived / 4 expected", "not reached")
	states := eval[map[string]string](t, b, `Object.fromEntries([...document.querySelectorAll("svg#graph g.box")].map(g => [g.dataset.node + "/" + g.dataset.role, g.dataset.state]))`)
	want := map[string]string{
		"build/": "completed", "targets/": "completed", "deploy/": "completed",
		"verify/": "waiting", "targets/collapse": "none",
	}
	if len(states) != len(want) {
		t.Errorf("boxes %v, want %v", states, want)
	}
	for k, v := range want {
		if states[k] != v {
			t.Errorf("box %s: state %q, want %q (all: %v)", k, states[k], v, states)
		}
	}
	// Each box's outline holds its text, as the browser laid it out.
	overflow := eval[[]string](t, b, `[...document.querySelectorAll("svg#graph g.box")].flatMap(g => {
		const box = g.querySelector("rect, polygon").getBBox();
		return [...g.querySelectorAll("text")].filter(t => { const r = t.getBBox(); return r.x < box.x || r.x + r.width > box.x + box.width; }).map(t => g.dataset.node + ": " + t.textContent);
	})`)
	if len(overflow) > 0 {
		t.Errorf("text wider than its box: %v", overflow)
	}
	if w := eval[float64](t, b, `document.querySelector("svg#graph").getBoundingClientRect().width`); w < 200 {
		t.Errorf("the graph is %v px wide", w)
	}
	b.checkClean(t, "run-release graph")
	png := value(t, b, "screenshot of the graph", chromedp.Screenshot(chromedp.CSS("#run-graph")))
	if len(png) < 8 || string(png[1:4]) != "PNG" {
		t.Fatalf("the graph's screenshot is not a PNG (%d bytes)", len(png))
	}
	if err := os.WriteFile(filepath.Join(e.dir, "graph-run-release.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
