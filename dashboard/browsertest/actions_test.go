package browsertest

import (
	"context"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
)

// act clicks the button data-action=name on the page at path, checks the
// confirm page, confirms, and returns the outcome page.
func (b *browser) act(t *testing.T, base, path, name, dir string) page {
	t.Helper()
	b.open(t, base+path)
	if b.count(t, `[data-action="`+name+`"]`) == 0 {
		t.Fatalf("%s: no %s button", path, name)
	}
	confirm := b.click(t, `[data-action="`+name+`"]`)
	if confirm.Status != http.StatusOK || b.count(t, `form#confirm`) != 1 {
		t.Fatalf("%s: %s led to no confirm form (status %d):\n%s", path, name, confirm.Status, clip(confirm.Text))
	}
	if b.count(t, `form#confirm input[name="csrf"]`) != 1 {
		t.Errorf("%s: the %s form carries no CSRF token", path, name)
	}
	b.screenshot(t, dir, "confirm-"+name)
	out := b.click(t, `form#confirm [data-action="confirm"]`)
	if out.Status != http.StatusOK {
		t.Fatalf("%s: %s answered %d:\n%s", path, name, out.Status, clip(out.Text))
	}
	b.checkClean(t, name)
	return out
}

// outcomeOK is the outcome page's data-ok.
func (b *browser) outcomeOK(t *testing.T) string {
	t.Helper()
	return eval[string](t, b, `(document.querySelector('#outcome') || {dataset: {}}).dataset.ok || ''`)
}

// Revive, cancel and signal clicked through their confirm pages change
// the database; a second revive of the same item is refused in the page.
func actionsChangeTheDatabase(t *testing.T, e *env) {
	b, wl := e.b, e.wl
	base := e.base
	dir := e.dir
	ctx := context.Background()

	// Revive a dead item.
	dead := wl.dead[0]
	b.act(t, base, "/items/"+dead.String(), "revive", dir)
	if ok := b.outcomeOK(t); ok != "true" {
		t.Errorf("revive: outcome data-ok %q", ok)
	}
	b.screenshot(t, dir, "outcome-revive")
	if it := get(t, wl.store, dead); it.State != core.StateAvailable || it.Attempt != 0 {
		t.Errorf("revived item: state %s attempt %d, want available 0", it.State, it.Attempt)
	}
	// The page of a revived item offers no revive; the URL the button had
	// is refused in the page, and the database is not touched again.
	b.open(t, base+"/items/"+dead.String())
	if n := b.count(t, `[data-action="revive"]`); n != 0 {
		t.Errorf("an available item shows %d revive buttons", n)
	}
	b.open(t, base+"/items/"+dead.String()+"/revive")
	b.click(t, `form#confirm [data-action="confirm"]`)
	if ok := b.outcomeOK(t); ok != "false" {
		t.Errorf("second revive: outcome data-ok %q, want false", ok)
	}
	b.takeErrors()

	// Cancel an available item.
	avail := wl.available[0]
	b.act(t, base, "/items/"+avail.String(), "cancel", dir)
	if it := get(t, wl.store, avail); it.State != core.StateCancelled {
		t.Errorf("cancelled item: state %s", it.State)
	}

	// Signal a waiting run: the signal is stored.
	waiting := wl.runsWaiting[0]
	b.open(t, base+"/runs/"+waiting.String())
	// The waiting step's own button, which names its signal.
	b.click(t, `#waiting [data-action="signal"]`)
	if name := value(t, b, "signal name", chromedp.Value(chromedp.CSS(`form#confirm input[name="name"]`))); name != "approved" {
		t.Errorf("signal form: name %q, want approved (the waiting step's)", name)
	}
	b.do(t, "payload", chromedp.SetValue(chromedp.CSS(`form#confirm textarea[name="payload"]`), `{"by":"ops"}`))
	b.screenshot(t, dir, "confirm-signal")
	b.click(t, `form#confirm [data-action="confirm"]`)
	if ok := b.outcomeOK(t); ok != "true" {
		t.Errorf("signal: outcome data-ok %q", ok)
	}
	sigs, err := wl.store.Signals(ctx, waiting)
	if err != nil || len(sigs) != 1 || sigs[0].Name != "approved" {
		t.Errorf("signals of the run: %+v, %v; want one named approved", sigs, err)
	}

	// Cancel the other waiting run.
	other := wl.runsWaiting[1]
	b.act(t, base, "/runs/"+other.String(), "cancel-run", dir)
	if r, err := wl.store.GetRun(ctx, other); err != nil || r.State != core.RunCancelled {
		t.Errorf("cancelled run: %s, %v", r.State, err)
	}

	// Revive the halted run.
	b.act(t, base, "/runs/"+wl.runHalted.String(), "revive-run", dir)
	if r, err := wl.store.GetRun(ctx, wl.runHalted); err != nil || r.State != core.RunRunning {
		t.Errorf("revived run: %s, %v", r.State, err)
	}
	b.checkClean(t, "actions")
}

// A POST that did not come from the confirm form (no CSRF token) is
// refused, and changes nothing.
func actionsRefuseAFormWithoutToken(t *testing.T, e *env) {
	b, wl := e.b, e.wl
	base := e.base
	dead := wl.dead[1]
	b.open(t, base+"/items/"+dead.String()+"/revive")
	b.do(t, "drop the token", chromedp.Evaluate[chromedp.Void](`document.querySelector('form#confirm input[name="csrf"]').remove()`))
	p := b.click(t, `form#confirm [data-action="confirm"]`)
	if p.Status != http.StatusForbidden && p.Status != http.StatusBadRequest {
		t.Errorf("revive without a token: status %d, want 403 or 400", p.Status)
	}
	b.takeErrors()
	if it := get(t, wl.store, dead); it.State != core.StateDead {
		t.Errorf("revive without a token changed the item: %s", it.State)
	}
}

// With actions off, the action URLs are refused, and change nothing (the
// pages' check finds no button on them).
func readOnlyActionURLsRefused(t *testing.T, e *env) {
	b, wl := e.b, e.wl
	base := e.base
	b.open(t, base+"/")
	if got := eval[string](t, b, `document.querySelector('#mode').textContent`); got != "read-only" {
		t.Errorf("mode badge %q", got)
	}
	for _, path := range []string{"/items/" + wl.dead[0].String() + "/revive", "/runs/" + wl.runHalted.String() + "/revive", "/runs/" + wl.runsWaiting[0].String() + "/signal"} {
		if p := b.open(t, base+path); p.Status != http.StatusForbidden {
			t.Errorf("%s with actions off: status %d, want 403", path, p.Status)
		}
	}
	b.takeErrors()
	if it := get(t, wl.store, wl.dead[0]); it.State != core.StateDead {
		t.Errorf("read-only dashboard changed an item: %s", it.State)
	}
}

func get(t *testing.T, store *core.Store, id uuid.UUID) core.Item {
	t.Helper()
	it, err := store.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return it
}
