package conformance_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/sqlite"
)

// testPlenumConformance is a whole test of a user's module: it runs the
// suite against the database the application uses, here a SQLite file. In
// your own _test.go file, name it TestPlenumConformance.
func testPlenumConformance(t *testing.T) {
	conformance.Run(t, conformance.Config{
		Dialect: sqlite.Dialect(),
		// A new handle for every subtest, closed when the subtest ends.
		Open: func(t testing.TB) *sql.DB {
			db, err := sqlite.Open(filepath.Join(t.TempDir(), "plenum.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		},
	})
}

// Run the suite from a test of your own, against your own database. For a
// server database, Open can be conformance.Opener(driverName,
// conformance.DSN(t, "postgres")): the DSN comes from PLENUM_POSTGRES_DSN.
func Example() {
	_ = testPlenumConformance
}
