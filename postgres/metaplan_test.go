package postgres_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/testkit/metaplan"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/postgres"
)

// browse's pages by a tag and by a metadata key and value read item_meta
// by the index that leads with the filter (item_meta_name, item_meta_value),
// and the items by their primary key, never a table scan: 5,000 tagged
// items, 50 tenants.
func TestExplain_MetaFilterPagesUseMetaIndexes(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := conformance.Opener(postgres.DriverName, harness.DSN(t))(t)
	p := fmt.Sprintf("mp%08x_", rand.Uint32())
	s, err := core.Open(ctx, db, postgres.Dialect(), core.Options{Prefix: p, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := migrations.Drop(cctx, db, postgres.Dialect(), p); err != nil {
			t.Errorf("drop tables %s*: %v", p, err)
		}
	})
	metaplan.Fill(ctx, t, s, 5000)
	if _, err := db.ExecContext(ctx, "ANALYZE "+p+"item_meta; ANALYZE "+p+"items"); err != nil {
		t.Fatal(err)
	}
	tag, value := metaplan.Pages(t, postgres.Dialect(), p)
	for index, pg := range map[string]metaplan.Page{p + "item_meta_name": tag, p + "item_meta_value": value} {
		rows, err := db.QueryContext(ctx, "EXPLAIN "+pg.SQL, pg.Args...)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, line)
		}
		rows.Close()
		text := strings.Join(plan, "\n")
		t.Logf("%s:\n%s", pg.SQL, text)
		// Backward in id order, or (a few matches) a bitmap of them.
		if !strings.Contains(text, "Scan Backward using "+index) && !strings.Contains(text, "Bitmap Index Scan on "+index) {
			t.Errorf("item_meta is not read by %s:\n%s", index, text)
		}
		if !strings.Contains(text, "using "+p+"items_pkey") || strings.Contains(text, "Seq Scan") {
			t.Errorf("the items are not read by their key, or the page scans a table:\n%s", text)
		}
	}
}
