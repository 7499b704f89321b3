package core_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/sqlite"
)

// Tags and metadata are set at enqueue, kept in a table of their own, and
// read back for any number of items in one query per chunk of ids.
func ExampleStore_ItemMetadata() {
	dir, _ := os.MkdirTemp("", "plenum-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	db, _ := sqlite.Open(filepath.Join(dir, "jobs.db"))
	defer db.Close()
	store, _ := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})

	out, _ := store.Enqueue(ctx,
		core.ItemSpec{Queue: "email", Tags: []string{"vip", "eu"}, Metadata: map[string]string{"tenant": "acme"}},
		core.ItemSpec{Queue: "email"})
	meta, _ := store.ItemMetadata(ctx, out[0].ID, out[1].ID)
	fmt.Println(meta[out[0].ID].Tags, meta[out[0].ID].Values["tenant"])
	_, has := meta[out[1].ID]
	fmt.Println("second item has any:", has)
	// Output:
	// [eu vip] acme
	// second item has any: false
}
