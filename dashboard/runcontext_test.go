package dashboard_test

import (
	"context"
	"encoding/json"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dashboard"
)

// TestRun_ShowsContext: a run's page lists its context, each key with its
// value (escaped), the item that wrote it, linked, and when; a run
// without one says none.
func TestRun_ShowsContext(t *testing.T) {
	eachDatabase(t, func(t *testing.T, st *core.Store) {
		ctx := t.Context()
		run, _, err := st.CreateRun(ctx, core.RunSpec{Name: "ctxpage"}, core.ItemSpec{Queue: "ctxpage"})
		if err != nil {
			t.Fatal(err)
		}
		bare, _, err := st.CreateRun(ctx, core.RunSpec{Name: "ctxbare"})
		if err != nil {
			t.Fatal(err)
		}
		owner, err := st.RegisterOwner(ctx, core.RegisterOwnerParams{})
		if err != nil {
			t.Fatal(err)
		}
		cs, err := st.Claim(ctx, core.ClaimParams{Queue: "ctxpage", Owner: owner, Limit: 1, Lease: time.Minute})
		if err != nil || len(cs) != 1 {
			t.Fatalf("Claim = %v, %v", cs, err)
		}
		if held, err := st.Fence(ctx, cs[0], func(ctx context.Context, f *core.Fenced) error {
			if err := f.Complete(ctx, nil); err != nil {
				return err
			}
			return f.SetRunContext(ctx, "stage", json.RawMessage(`{"note":"<b>shipped</b>"}`))
		}); err != nil || !held {
			t.Fatalf("Fence = %v, %v", held, err)
		}

		c := serve(t, newDashboard(t, st, dashboard.Options{}), "")
		_, body := c.get("/runs/" + run.ID.String())
		for _, want := range []string{
			`<table id="context" class="grid">`,
			`<tr data-key="stage"><td class="mono">stage</td>`,
			html.EscapeString(`"note": "<b>shipped</b>"`),
			`<a href="/items/` + cs[0].ID.String() + `">` + cs[0].ID.String() + `</a>`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("the run's page lacks %q", want)
			}
		}
		if strings.Contains(body, "<b>shipped</b>") {
			t.Errorf("the context's value is not escaped")
		}
		if _, body := c.get("/runs/" + bare.ID.String()); !strings.Contains(body, `<p class="empty" id="context">none</p>`) {
			t.Errorf("a run without a context does not say none")
		}
	})
}
