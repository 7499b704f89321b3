package browse_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/plenumdb/plenum/browse"
	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/sqlite"
)

// Items filtered on a tag, and on a metadata key and its value.
func ExampleReader_Items_tagsAndMetadata() {
	dir, _ := os.MkdirTemp("", "plenum-example")
	defer os.RemoveAll(dir)
	db, err := sqlite.Open(filepath.Join(dir, "jobs.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	store, err := core.Open(ctx, db, sqlite.Dialect(), core.Options{Migrate: true})
	if err != nil {
		log.Fatal(err)
	}
	_, _ = store.Enqueue(ctx,
		core.ItemSpec{Queue: "email", Kind: "welcome", Tags: []string{"vip"}, Metadata: map[string]string{"tenant": "acme"}},
		core.ItemSpec{Queue: "email", Kind: "digest", Metadata: map[string]string{"tenant": "globex"}},
	)

	r := browse.New(store)
	vip, _ := r.Items(ctx, browse.ItemFilter{Tag: "vip"})
	globex, _ := r.Items(ctx, browse.ItemFilter{MetaKey: "tenant", MetaValue: "globex"})
	fmt.Println(len(vip.Items), vip.Items[0].Kind)
	fmt.Println(len(globex.Items), globex.Items[0].Kind)
	// Output:
	// 1 welcome
	// 1 digest
}
