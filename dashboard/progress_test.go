package dashboard_test

import (
	"encoding/json"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dashboard"
)

// TestItem_ShowsProgress: an item's page shows its last progress report,
// a bar and its percentage, the attempt that wrote it and its partial
// output (escaped); an item that reported none shows no progress.
func TestItem_ShowsProgress(t *testing.T) {
	eachDatabase(t, func(t *testing.T, st *core.Store) {
		ctx := t.Context()
		res, err := st.Enqueue(ctx, core.ItemSpec{Queue: "progpage"}, core.ItemSpec{Queue: "progpage"})
		if err != nil {
			t.Fatal(err)
		}
		owner, err := st.RegisterOwner(ctx, core.RegisterOwnerParams{})
		if err != nil {
			t.Fatal(err)
		}
		cs, err := st.Claim(ctx, core.ClaimParams{Queue: "progpage", Owner: owner, Limit: 1, Lease: time.Minute})
		if err != nil || len(cs) != 1 {
			t.Fatalf("Claim = %v, %v", cs, err)
		}
		if held, err := st.SetProgress(ctx, cs[0], core.Progress{Done: 3, Total: 8, Output: json.RawMessage(`{"note":"<b>row 3</b>"}`)}); err != nil || !held {
			t.Fatalf("SetProgress = %v, %v", held, err)
		}
		other := res[0].ID
		if other == cs[0].ID {
			other = res[1].ID
		}

		c := serve(t, newDashboard(t, st, dashboard.Options{}), "")
		_, body := c.get("/items/" + cs[0].ID.String())
		for _, want := range []string{
			`<progress id="progress-bar" max="8" value="3"></progress>`,
			`<span id="progress-text">3 of 8 (37.5%)</span>`,
			`reported by attempt 1`,
			html.EscapeString(`"note": "<b>row 3</b>"`),
		} {
			if !strings.Contains(body, want) {
				t.Errorf("the item's page lacks %q", want)
			}
		}
		if strings.Contains(body, "<b>row 3</b>") {
			t.Errorf("the progress output is not escaped")
		}
		if _, body := c.get("/items/" + other.String()); strings.Contains(body, `id="progress"`) {
			t.Errorf("an item without progress shows some")
		}
	})
}
