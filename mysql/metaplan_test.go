package mysql_test

import (
	"testing"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/metaplan"
	"github.com/plenumdb/plenum/mysql"
)

// browse's pages by a tag and by a metadata key and value read item_meta
// by the index that leads with the filter (item_meta_name, item_meta_value),
// and the items by their primary key (eq_ref), never a table scan: 5,000
// tagged items, 50 tenants.
func TestExplain_MetaFilterPagesUseMetaIndexes(t *testing.T) {
	t.Parallel()
	db := openDB(t)
	ctx := t.Context()
	p := newPrefix(t, db)
	s, err := core.Open(ctx, db, mysql.Dialect(), core.Options{Prefix: p, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	metaplan.Fill(ctx, t, s, 5000)
	for _, table := range []string{"item_meta", "items"} {
		if _, err := db.ExecContext(ctx, "ANALYZE TABLE "+p+table); err != nil {
			t.Fatal(err)
		}
	}
	tag, value := metaplan.Pages(t, mysql.Dialect(), p)
	for index, pg := range map[string]metaplan.Page{p + "item_meta_name": tag, p + "item_meta_value": value} {
		plan := explainRows(t, db, "EXPLAIN "+pg.SQL, pg.Args...)
		t.Logf("%s:\n%s", pg.SQL, formatPlan(plan))
		var meta, items bool
		for _, row := range plan {
			switch row["table"] {
			case "m":
				meta = row["key"] == index && (row["type"] == "ref" || row["type"] == "range")
			case "i":
				items = row["key"] == "PRIMARY" && row["type"] == "eq_ref"
			}
			if row["type"] == "ALL" && row["table"] != "<derived2>" {
				t.Errorf("the page scans %s", row["table"])
			}
		}
		if !meta || !items {
			t.Errorf("item_meta is not read by %s (%v), or the items by their primary key (%v)", index, meta, items)
		}
	}
}
