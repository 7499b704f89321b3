package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/plenumdb/plenum/conformance"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/sqlite"
)

// TestConformance runs the shared conformance suite on SQLite. Every
// subtest gets a database file of its own: SQLite has one writer per file,
// so subtests on separate files run in parallel without queueing behind one
// another's writes, while each subtest's own goroutines still contend for
// its one writer. (Measured with -race on two cores: about 12 s this way,
// about 21 s with every subtest on one shared file, about 22 s serially.)
func TestConformance(t *testing.T) {
	conformance.Run(t, conformance.Config{
		Dialect: sqlite.Dialect(),
		Open: func(t testing.TB) *sql.DB {
			db, err := sqlite.Open(filepath.Join(t.TempDir(), "conformance.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		},
		// A file opened without the DSN settings: rollback journal, no
		// busy timeout.
		Misconfigured: func(t testing.TB) *sql.DB {
			db, err := sql.Open(sqlite.DriverName, filepath.Join(t.TempDir(), "plain.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		},
	})
}

// constrained is SQLite dressed as a database with tighter limits and no
// UPDATE ... RETURNING, so that the core's other paths (locking reads before
// updates; inserts, IN lists and completions split by bind count and by
// statement size) run the whole suite too, not only on the databases that
// need them.
type constrained struct{ dialect.Dialect }

func (c constrained) Capabilities() dialect.Capabilities {
	caps := c.Dialect.Capabilities()
	caps.ReturningUpdate = false
	caps.MaxBindParams = 2000
	caps.MaxStatementBytes = 64 << 10
	return caps
}

// The database is opened with sql.Open and the dialect's DSN rather than
// with sqlite.Open, so that Begin takes the path for a *sql.DB it did not
// open (its own BEGIN IMMEDIATE on a connection, statements unprepared),
// and the constrained dialect, which hides the optional UUIDLister, binds
// IN lists: the whole suite runs on those paths as well.
func TestConformance_ConstrainedPaths(t *testing.T) {
	conformance.Run(t, conformance.Config{
		Dialect: constrained{sqlite.Dialect()},
		Open: func(t testing.TB) *sql.DB {
			dsn, err := sqlite.DSN(filepath.Join(t.TempDir(), "constrained.db"))
			if err != nil {
				t.Fatal(err)
			}
			db, err := sql.Open(sqlite.DriverName, dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		},
	})
}
