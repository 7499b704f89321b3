package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dashboard"
)

// TestItems_TagAndMetadataFilters: tag= and meta_key=/meta_value= choose
// the items carrying them, in keyset pages, the form keeps them, a bad one
// is refused, and an item's page shows its tags and metadata, escaped.
func TestItems_TagAndMetadataFilters(t *testing.T) {
	eachDatabase(t, func(t *testing.T, st *core.Store) {
		ctx := context.Background()
		var red, acme []string
		for i := range 6 {
			sp := core.ItemSpec{Queue: "meta"}
			if i%2 == 0 {
				sp.Tags = []string{"red"}
			}
			sp.Metadata = map[string]string{"tenant": []string{"acme", "<globex>"}[i%3/2]}
			e, err := st.Enqueue(ctx, sp)
			if err != nil {
				t.Fatal(err)
			}
			id := e[0].ID.String()
			if i%2 == 0 {
				red = append([]string{id}, red...)
			}
			if i%3 != 2 {
				acme = append([]string{id}, acme...)
			}
		}
		c := serve(t, newDashboard(t, st, dashboard.Options{}), "")
		if got, _ := walk(t, c, "", "/items?tag=red&limit=1"); fmt.Sprint(got) != fmt.Sprint(red) {
			t.Errorf("tag=red: got %v, want %v", got, red)
		}
		if got, _ := walk(t, c, "", "/items?meta_key=tenant&meta_value=acme&limit=2"); fmt.Sprint(got) != fmt.Sprint(acme) {
			t.Errorf("tenant=acme: got %v, want %v", got, acme)
		}
		_, body := c.get("/items?tag=red&meta_key=&queue=meta")
		if !strings.Contains(body, `name="tag" value="red"`) {
			t.Errorf("filters form lacks the tag")
		}
		if code, body := c.get("/items?tag=a%0Ab"); code != http.StatusBadRequest {
			t.Errorf("tag with a newline: status %d, want 400\n%s", code, body)
		}
		_, body = c.get("/items/" + red[1]) // i = 2: red, tenant <globex>
		for _, w := range []string{`id="tags"`, `>red</a>`, `<dt>tenant</dt>`, `&lt;globex&gt;`, `/items?tag=red`} {
			if !strings.Contains(body, w) {
				t.Errorf("item page lacks %q", w)
			}
		}
		if strings.Contains(body, "<globex>") {
			t.Errorf("item page does not escape a metadata value")
		}
	})
}
