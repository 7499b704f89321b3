package sqlite_test

import (
	"strings"
	"testing"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/metaplan"
)

// browse's pages by a tag and by a metadata key and value read item_meta
// by the index that leads with the filter (item_meta_name, item_meta_value),
// and the items by their primary key: neither table is scanned, and
// only the page's rows are sorted.
func TestExplain_MetaFilterPagesUseMetaIndexes(t *testing.T) {
	t.Parallel()
	db, _ := openDB(t)
	ctx := t.Context()
	s, err := core.Open(ctx, db, d, core.Options{Prefix: "mp_", Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	metaplan.Fill(ctx, t, s, 2000)
	exec(t, db, "ANALYZE")
	tag, value := metaplan.Pages(t, d, "mp_")
	for index, p := range map[string]metaplan.Page{"mp_item_meta_name": tag, "mp_item_meta_value": value} {
		text := queryPlan(t, db, p.SQL, p.Args...)
		t.Logf("%s:\n%s", p.SQL, text)
		if !strings.Contains(text, "SEARCH m USING COVERING INDEX "+index) && !strings.Contains(text, "SEARCH m USING INDEX "+index) {
			t.Errorf("item_meta is not searched by %s:\n%s", index, text)
		}
		if !strings.Contains(text, "SEARCH i USING INDEX") && !strings.Contains(text, "SEARCH i USING PRIMARY KEY") {
			t.Errorf("the items are not read by their key:\n%s", text)
		}
		// The page's n ids are sorted again after the join: n rows.
		if strings.Contains(text, "SCAN m") || strings.Contains(text, "SCAN i") {
			t.Errorf("the page scans a table:\n%s", text)
		}
	}
}
