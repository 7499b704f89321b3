package core_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/plenumdb/plenum/core"
	_ "github.com/plenumdb/plenum/sqlite" // links the dialect: its DSNs are file paths
)

// A store opened from a DSN chosen at run time (a flag, an environment
// variable): the DSN's form says which linked dialect opens it. With
// postgres imported, a DATABASE_URL of postgres://... works the same way.
func ExampleOpenDSN() {
	dir, err := os.MkdirTemp("", "plenum-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	store, err := core.OpenDSN(ctx, "", filepath.Join(dir, "jobs.db"), core.Options{Migrate: true})
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	fmt.Println("opened on", store.Dialect().Name())
	// Output: opened on sqlite
}
