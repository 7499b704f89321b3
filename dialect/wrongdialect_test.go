package dialect_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plenumdb/plenum/core"
	"github.com/plenumdb/plenum/dialect"
	"github.com/plenumdb/plenum/migrations"
	"github.com/plenumdb/plenum/mysql"
	"github.com/plenumdb/plenum/postgres"
	"github.com/plenumdb/plenum/sqlite"
)

// A DSN written for another database is refused before any connection,
// with an error that names the database it is for and never the password.
// (Not parallel: it runs in a directory of its own, to see that SQLite
// created no file.)
func TestWrongDialectDSN_RefusedClearly(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	const pg, my = "postgres://u:hunter2@127.0.0.1:1/db?sslmode=disable", "u:hunter2@tcp(127.0.0.1:1)/db"
	cases := []struct {
		name string
		err  func() error
		want string
	}{
		{"postgres.Open(MySQL DSN)", func() error { _, err := postgres.Open(my); return err }, "written for mysql"},
		{"mysql.Open(PostgreSQL URL)", func() error { _, err := mysql.Open(pg); return err }, "written for postgres"},
		{"mysql.DSN(mysql:// URL)", func() error { _, err := mysql.DSN("mysql://u:hunter2@h/db"); return err }, "a URL is not a go-sql-driver DSN"},
		{"sqlite.Open(PostgreSQL URL)", func() error { _, err := sqlite.Open(pg); return err }, "written for postgres"},
		{"sqlite.Open(MySQL DSN)", func() error { _, err := sqlite.Open(my); return err }, "written for mysql"},
	}
	for _, tc := range cases {
		err := tc.err()
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s = %v, want an error saying %q, without the password", tc.name, err, tc.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused DSNs left %d files in the working directory", len(entries))
	}
}

// A handle on one kind of database given to another's dialect: core.Open
// refuses it, naming the driver, and creates nothing.
func TestWrongDialectHandle_RefusedAndNothingCreated(t *testing.T) {
	t.Parallel()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, d := range []dialect.Dialect{postgres.Dialect(), mysql.Dialect()} {
		_, err := core.Open(context.Background(), db, d, core.Options{Prefix: "wrong_", Migrate: true})
		if !errors.Is(err, core.ErrMisconfigured) || !strings.Contains(err.Error(), "driver *sqlite.") {
			t.Errorf("core.Open(a SQLite handle, %s) = %v, want ErrMisconfigured naming the driver", d.Name(), err)
		}
		if v, err := migrations.Version(context.Background(), db, sqlite.Dialect(), "wrong_"); err != nil || v != 0 {
			t.Errorf("after the refused Open with %s: version %d, %v; want nothing created", d.Name(), v, err)
		}
	}
}
