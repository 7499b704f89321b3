package storeworkload

import (
	"context"
	"database/sql"
	"testing"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
)

// workloadItemMeta reaches the statements of items' tags and metadata:
// items enqueued with them (written), and read back.
func workloadItemMeta(t *testing.T, db *sql.DB, d dialect.Dialect) {
	ctx := context.Background()
	must := fatal(t)
	s := open(t, db, d, core.Options{})
	out, err := s.Enqueue(ctx, core.ItemSpec{Queue: "meta", Tags: []string{"a", "b"}, Metadata: map[string]string{"k": "v"}}, core.ItemSpec{Queue: "meta"})
	must(err)
	got, err := s.ItemMetadata(ctx, out[0].ID, out[1].ID)
	must(err)
	if len(got) != 1 || len(got[out[0].ID].Tags) != 2 || got[out[0].ID].Values["k"] != "v" {
		t.Fatalf("ItemMetadata = %+v, want the first item's two tags and one key", got)
	}
}
