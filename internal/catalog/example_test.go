package catalog_test

import (
	"fmt"
	"log"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/internal/catalog"
	"github.com/plenumdb/plenum/sqlite"
)

// Every statement a store sends on SQLite, at sizes 1 and 2 and the
// largest it sends: what a grammar check enumerates; Match tells whether a
// statement recorded on the wire is one of them.
func Example() {
	c, err := catalog.New(sqlite.Dialect(), core.Options{Prefix: "jobs_"})
	if err != nil {
		log.Fatal(err)
	}
	all, err := c.Statements(1, 2, catalog.LargestSize)
	if err != nil {
		log.Fatal(err)
	}
	st, ok := c.Match("SELECT COUNT(*) FROM jobs_processes WHERE id = ?")
	fmt.Println(len(all) > 100, st.Name, ok)
	// Output: true owner.exists true
}
