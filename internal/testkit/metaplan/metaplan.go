// Package metaplan fills a store with tagged items and renders the
// statements of browse's filters on tags and metadata, for the tests of
// each dialect that EXPLAIN them.
package metaplan

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/internal/catalog"
)

// Fill enqueues n items on s, each tagged "every" and holding a tenant,
// one of 50 ("t0" to "t49"), in batches of 500.
func Fill(ctx context.Context, t *testing.T, s *core.Store, n int) {
	t.Helper()
	for done := 0; done < n; {
		var specs []core.ItemSpec
		for ; done < n && len(specs) < 500; done++ {
			specs = append(specs, core.ItemSpec{Queue: "plan", Tags: []string{"every"}, Metadata: map[string]string{"tenant": fmt.Sprintf("t%d", done%50)}})
		}
		if _, err := s.Enqueue(ctx, specs...); err != nil {
			t.Fatal(err)
		}
	}
}

// Page is one rendered statement and its binds.
type Page struct {
	SQL  string
	Args []any
}

// Pages are the first page of 50 items by the tag "every" and by tenant
// "t7", with no other filter, as a store of prefix sends them.
func Pages(t *testing.T, d dialect.Dialect, prefix string) (tag, value Page) {
	t.Helper()
	c, err := catalog.New(d, core.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	all, err := c.Statements(50)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range all {
		if st.Name != "browse.items-meta" || strings.Contains(st.SQL, " AND i.queue") || strings.Contains(st.SQL, " AND i.state") ||
			strings.Contains(st.SQL, " AND i.kind") || strings.Contains(st.SQL, " AND i.run_id") {
			continue
		}
		switch {
		case strings.Contains(st.SQL, "m.value") && value.SQL == "":
			value = Page{st.SQL, []any{"tenant", "t7", d.UUID(uuid.Max)}}
		case strings.Contains(st.SQL, "m.kind = 't'") && tag.SQL == "":
			tag = Page{st.SQL, []any{"every", d.UUID(uuid.Max)}}
		}
	}
	if tag.SQL == "" || value.SQL == "" {
		t.Fatal("the catalog renders no page of browse.items-meta without other filters")
	}
	return tag, value
}
