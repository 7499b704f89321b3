package bundledsqlite

import (
	"database/sql"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/golang-migrate/migrate/v4"
	msqlite "github.com/golang-migrate/migrate/v4/database/sqlite"
	_ "github.com/golang-migrate/migrate/v4/source/file"
)

// The checked-in files go up, down and up again on golang-migrate's own
// SQLite, older than the 3.42 that unixepoch('subsec') needs, and record
// every version in Plenum's migrations table.
func TestGolangMigrate_BundledSQLite_UpDownUp(t *testing.T) {
	dir, err := filepath.Abs(filepath.Join("..", "..", "migrations", "sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "bundled.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var version string
	if err := db.QueryRow("SELECT sqlite_version()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	t.Logf("golang-migrate's SQLite: %s", version)
	parts := strings.Split(version+".", ".")
	if minor, _ := strconv.Atoi(parts[1]); parts[0] != "3" || minor >= 42 {
		t.Fatalf("SQLite %s is not older than 3.42: this test no longer tests an old SQLite", version)
	}

	driver, err := msqlite.WithInstance(db, &msqlite.Config{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := migrate.NewWithDatabaseInstance("file://"+filepath.ToSlash(dir), "sqlite", driver)
	if err != nil {
		t.Fatal(err)
	}
	count := func(query string) int {
		t.Helper()
		var n int
		if err := db.QueryRow(query).Scan(&n); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return n
	}
	for round := 1; round <= 2; round++ {
		if err := m.Up(); err != nil {
			t.Fatalf("round %d: up: %v", round, err)
		}
		v, dirty, err := m.Version()
		if err != nil || dirty || v < 2 {
			t.Fatalf("round %d: version %d, dirty %v, %v", round, v, dirty, err)
		}
		if n := count("SELECT COUNT(*) FROM plenum_migrations WHERE applied_at > 0"); n != int(v) {
			t.Fatalf("round %d: %d versions recorded with a time, want %d", round, n, v)
		}
		if round == 2 {
			break
		}
		if err := m.Down(); err != nil {
			t.Fatalf("down: %v", err)
		}
		if n := count("SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'plenum_%'"); n != 0 {
			t.Fatalf("%d of Plenum's objects left after down", n)
		}
	}
}
