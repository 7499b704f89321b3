package browsertest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/core"
)

// A sealed item's payload and result, and a sealed run's input, output,
// context, and its steps' inputs and outputs show as "sealed (key id
// K)" wherever the dashboard shows them, and the value they hold shows
// nowhere.
func sealedValuesShowTheirKeyID(t *testing.T, e *env) {
	b, wl := e.b, e.wl
	label := "sealed (key id " + sealedKeyID + ")"
	items, err := wl.store.RunItems(t.Context(), core.RunItemsParams{Run: wl.runSealed, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 2 {
		t.Fatalf("the sealed run has %d items, want 2", len(items))
	}
	for _, c := range []struct {
		name, path string
		texts      map[string]string // element id: its whole text
	}{
		{"item-sealed", "/items/" + wl.sealedItem.String(), map[string]string{"payload": label, "result": label}},
		{"run-sealed", "/runs/" + wl.runSealed.String(), map[string]string{"input": label, "output": label}},
		{"run-sealed-step", "/items/" + items[1].ID.String(), map[string]string{"result": label}},
	} {
		p := b.open(t, e.base+c.path)
		if p.Status != http.StatusOK {
			t.Fatalf("%s: status %d", c.name, p.Status)
		}
		if strings.Contains(p.Text, sealedSecret) || strings.Contains(p.Text, "plenum.sealed") {
			t.Errorf("%s: the page shows a sealed value's bytes:\n%s", c.name, clip(p.Text))
		}
		for id, want := range c.texts {
			if got := eval[string](t, b, `document.getElementById('`+id+`').innerText`); got != want {
				t.Errorf("%s: #%s shows %q, want %q", c.name, id, got, want)
			}
		}
		if c.name == "run-sealed" {
			if got := eval[string](t, b, `document.querySelector('#context tr[data-key="note"] pre').innerText`); got != label {
				t.Errorf("%s: the context's note shows %q, want %q", c.name, got, label)
			}
		}
		if c.name == "run-sealed-step" {
			// A step's payload is the pipeline's envelope, clear but for
			// its input.
			p.mustContain(t, c.name, `"in": "`+label+`"`, `"node": "seal"`)
		}
		b.checkClean(t, c.name)
		b.screenshot(t, e.dir, c.name)
	}
}
